/**
 * Device conditions, Kubernetes-style, derived with the operational status (device-status.ts)
 * from the same observations; pure like it.
 *
 * Conditions — always all six, in CONDITION_TYPES order, each with a CamelCase `reason` and a
 * message naming the source and value. `Unknown` with reason NotObserved when the source never
 * observed the device.
 *  - Inventoried  NetBox lists the device (False: MissingFromNetBox).
 *  - Provisioned  Ironic is settled in `available`/`active` (False: fault, failed or transitional
 *                 state; Unknown: no provision state).
 *  - Schedulable  work can be placed on / kept on it, as the sources see it: False for Ironic
 *                 maintenance (MaintenanceSet) or SLURM down/drain/fail; True for SLURM
 *                 IDLE/ALLOCATED/MIXED/COMPLETING. The operator's cordon is its own condition
 *                 (as in Kubernetes, where cordoning does not change node conditions).
 *  - Healthy      health checker: ok True, warning/critical False, unknown Unknown.
 *  - Cordoned     operator field; never Unknown.
 *  - Fresh        False (SourceStale) naming each stale source and its age in seconds.
 * `lastTransitionTime` follows Kubernetes: kept from `previous` when that type's status is
 * unchanged, otherwise `now`.
 */
import { z } from "zod";
import {
  HEALTHY_CHECK_STATUSES,
  IRONIC_FAILED_STATES,
  IRONIC_SETTLED_STATES,
  camel,
  netboxSeen,
  observationAges,
  slurmWords,
  type Obs,
} from "./device-observations.ts";
import { SLURM_BUSY, SLURM_FAILED, SLURM_IMPAIRED } from "./slurm-nodes.ts";

export const CONDITION_TYPES = ["Inventoried", "Provisioned", "Schedulable", "Healthy", "Cordoned", "Fresh"] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
export const ConditionSchema = z.object({
  type: z.enum(CONDITION_TYPES),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string() /* RFC3339 */,
});
export type Condition = z.infer<typeof ConditionSchema>;

export interface DeriveOptions {
  now: Date;
  staleAfterMs: number;
  previous?: Condition[] | null;
}

type ConditionBody = Omit<Condition, "type" | "lastTransitionTime">;

const notObserved = (source: string): ConditionBody => ({
  status: "Unknown",
  reason: "NotObserved",
  message: `${source} has not observed this device`,
});

function inventoried(obs: Obs): ConditionBody {
  const nb = netboxSeen(obs);
  if (!nb) return notObserved("NetBox");
  if (nb.missing)
    return {
      status: "False",
      reason: "MissingFromNetBox",
      message: `NetBox no longer lists this device (last status '${nb.status}')`,
    };
  return { status: "True", reason: `NetBoxStatus${camel(nb.status)}`, message: `NetBox status is '${nb.status}'` };
}

function provisioned(obs: Obs): ConditionBody {
  const ir = obs.ironic;
  if (!ir) return notObserved("Ironic");
  const detail = ir.lastError ? `: ${ir.lastError}` : "";
  if (ir.fault) {
    const why = ir.maintenanceReason ? `: ${ir.maintenanceReason}` : detail;
    return { status: "False", reason: "IronicFault", message: `Ironic reports fault '${ir.fault}'${why}` };
  }
  const state = ir.provisionState?.toLowerCase();
  if (state === undefined)
    return { status: "Unknown", reason: "ProvisionStateUnknown", message: "Ironic reports no provision state" };
  const message = `Ironic provision state is '${state}'`;
  if (IRONIC_FAILED_STATES.includes(state)) {
    return {
      status: "False",
      reason: state.endsWith("failed") ? camel(state) : `ProvisionState${camel(state)}`,
      message: message + detail,
    };
  }
  const reason = `ProvisionState${camel(state)}`;
  if (IRONIC_SETTLED_STATES.includes(state)) return { status: "True", reason, message };
  const target = ir.targetProvisionState ? ` (target '${ir.targetProvisionState}')` : "";
  return { status: "False", reason, message: message + target };
}

function schedulable(obs: Obs): ConditionBody {
  if (obs.ironic?.maintenance) {
    const why = obs.ironic.maintenanceReason ? `: ${obs.ironic.maintenanceReason}` : "";
    return { status: "False", reason: "MaintenanceSet", message: `Ironic maintenance is set${why}` };
  }
  const sl = obs.slurm;
  if (!sl) return notObserved("SLURM");
  const shown = [sl.state ?? "(none)", ...sl.flags].join("+");
  const message = `SLURM node state is '${shown}'${sl.reason ? `: ${sl.reason}` : ""}`;
  const words = slurmWords(obs);
  const bad = [...SLURM_FAILED, ...SLURM_IMPAIRED].find((w) => words.has(w));
  if (bad) return { status: "False", reason: `Slurm${camel(bad)}`, message };
  const state = sl.state?.toUpperCase();
  if (state === undefined) return { status: "Unknown", reason: "SlurmStateUnknown", message };
  const ok = state === "IDLE" || SLURM_BUSY.includes(state);
  return { status: ok ? "True" : "Unknown", reason: `Slurm${camel(state)}`, message };
}

function healthy(obs: Obs): ConditionBody {
  const h = obs.health;
  if (!h) return notObserved("Health checker");
  const failing = h.conditions
    .filter((c) => !HEALTHY_CHECK_STATUSES.includes(c.status.toLowerCase()))
    .map((c) => `${c.name}=${c.status}${c.message ? ` (${c.message})` : ""}`);
  const message = `Health checker reports '${h.status}'${failing.length ? `: ${failing.join(", ")}` : ""}`;
  const status = h.status === "ok" ? "True" : h.status === "unknown" ? "Unknown" : "False";
  return { status, reason: `Health${camel(h.status)}`, message };
}

function cordoned(obs: Obs): ConditionBody {
  if (!obs.operator.cordoned) return { status: "False", reason: "NotCordoned", message: "Not cordoned by an operator" };
  const why = obs.operator.cordonReason ? `: ${obs.operator.cordonReason}` : " (no reason given)";
  return { status: "True", reason: "OperatorCordon", message: `Cordoned by an operator${why}` };
}

function fresh(obs: Obs, now: Date, staleAfterMs: number): ConditionBody {
  const ages = observationAges(obs, now);
  if (ages.length === 0)
    return { status: "Unknown", reason: "NotObserved", message: "No source has observed this device" };
  const limit = Number.isFinite(staleAfterMs) ? `${Math.floor(staleAfterMs / 1000)}s` : "no limit";
  const stale = ages.filter((a) => a.ageMs > staleAfterMs);
  if (stale.length === 0) {
    return {
      status: "True",
      reason: "AllSourcesFresh",
      message: `${ages.map((a) => a.source).join(", ")} observed within the limit (${limit})`,
    };
  }
  const list = stale.map((a) => `${a.source} last observed ${Math.floor(a.ageMs / 1000)}s ago`).join(", ");
  return { status: "False", reason: "SourceStale", message: `${list} (limit ${limit})` };
}

/** Kubernetes semantics: the transition time moves only when the status changes. */
function stamp(
  type: ConditionType,
  body: ConditionBody,
  previous: Condition[] | null | undefined,
  now: string,
): Condition {
  const prev = previous?.find((c) => c.type === type);
  const lastTransitionTime = prev && prev.status === body.status ? prev.lastTransitionTime : now;
  return { type, ...body, lastTransitionTime };
}

/** The six conditions, in CONDITION_TYPES order; see the header for what each says. */
export function deriveConditions(obs: Obs, opts: DeriveOptions): Condition[] {
  const bodies: Record<ConditionType, ConditionBody> = {
    Inventoried: inventoried(obs),
    Provisioned: provisioned(obs),
    Schedulable: schedulable(obs),
    Healthy: healthy(obs),
    Cordoned: cordoned(obs),
    Fresh: fresh(obs, opts.now, opts.staleAfterMs),
  };
  // Once, not per condition: a reflection derives the conditions of thousands of devices.
  const now = opts.now.toISOString();
  return CONDITION_TYPES.map((type) => stamp(type, bodies[type], opts.previous, now));
}
