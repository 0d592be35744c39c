/**
 * Device status derivation: the ONE place where a device's `operationalStatus` and its
 * Kubernetes-style `conditions` are computed from what the sources observed. It is pure
 * (no clock, no I/O): the caller passes `now`, so the same inputs always give the same answer.
 *
 * Inputs: NetBox (inventory, the source of truth for what should exist), OpenStack Ironic
 * (bare-metal lifecycle), SLURM (scheduler), the health checker, plus operator fields and the
 * kind of the device's active job. A source that is `null` (or NetBox with `observedAt: null`)
 * has never observed the device; its fields are ignored rather than trusted.
 *
 * operationalStatus — rules in priority order, the first that matches wins:
 *
 *  1. QUARANTINED  operator cordoned. An explicit human decision overrides every observation:
 *                  the operator has already taken the device out and knows more than we do.
 *  2. STALE        a source that HAS observed the device last did so more than `staleAfterMs`
 *                  before `now` (`isStale`). When data is old, everything below may be wrong;
 *                  "we are blind" is the actionable fact (fix the collector), and we must not
 *                  allocate or repair on old news. A source that never observed it is ignored.
 *                  Pass `staleAfterMs: Infinity` for the status ignoring staleness — what is
 *                  stored in the DB; staleness is applied at read time from the observedAt's.
 *  3. FAILED       NetBox `failed`; Ironic `fault` set or a failed provision state (see
 *                  IRONIC_FAILED_STATES); SLURM FAIL; health `critical`. Faults outrank
 *                  lifecycle: a node that fails burn-in is FAILED, not BURN_IN.
 *  4. IMPAIRED     Ironic maintenance; SLURM DOWN/DRAIN/DRAINING/DRAINED/NOT_RESPONDING;
 *                  health `warning`; NetBox `offline`; NetBox `missing` (no longer listed).
 *                  Degraded but not known-broken, so below FAILED and above every lifecycle state.
 *  5. BURN_IN      active job is BURN_IN. Burn-in drives Ironic through manageable/cleaning and
 *                  SLURM through allocations, so it must outrank ENROLLING and ALLOCATED.
 *  6. ENROLLING    active job is ENROL; or Ironic in an enrolment/cleaning state (see
 *                  IRONIC_ENROLLING_STATES, incl. automated cleaning after a teardown: the node is
 *                  not usable until it is back to `available`); or NetBox planned/staged/inventory
 *                  with no Ironic node yet.
 *  7. ALLOCATED    Ironic in a deployed/deploying state (IRONIC_ALLOCATED_STATES) or SLURM
 *                  ALLOCATED/MIXED/COMPLETING. Any signal of use beats a signal of idleness, so a
 *                  busy node is never offered as AVAILABLE.
 *  8. AVAILABLE    Ironic `available` and SLURM IDLE or absent; or, with no Ironic node, NetBox
 *                  `active` and SLURM IDLE. Never while NetBox says `decommissioning`.
 *  9. UNKNOWN      anything else: NetBox `active` alone, nothing observed, unrecognised states.
 *
 * Edge-case decisions:
 *  - NetBox `decommissioning` is not a fault (it is a planned exit), so it adds nothing to rules
 *    3-7; it only blocks AVAILABLE, so such a device ends as UNKNOWN unless a higher rule holds.
 *  - When Ironic has a node, Ironic decides the lifecycle; NetBox planned/staged/inventory only
 *    means ENROLLING while there is no node yet.
 *  - slurmrestd has moved node-state words between the base state and the flag list across
 *    versions, so SLURM rules look at state and flags together (a FAIL flag counts as FAIL).
 *    SLURM present without a state (or UNKNOWN) blocks AVAILABLE: we cannot confirm it is idle.
 *    RESERVED/MAINTENANCE flags are reservation matters for SLURM admins: reported, not rules.
 *  - Ironic states beyond those listed in the brief are placed where their meaning puts them:
 *    `clean hold`/`adopting` enrol; rescue, servicing, `deploy hold` and `deleting` mean an
 *    instance still owns the node, so ALLOCATED. Any other state falls through (UNKNOWN).
 *    Power state and last_error alone never change the status (Ironic sets `fault` and
 *    maintenance when power fails); last_error is quoted in messages for failed states.
 *  - Job kinds other than BURN_IN and ENROL do not change the status; the job itself is shown.
 *  - An observation timestamp in the future (clock skew) is fresh; exactly `staleAfterMs` old is
 *    still fresh (strictly greater is stale).
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

export const OPERATIONAL_STATUSES = [
  "AVAILABLE",
  "ALLOCATED",
  "ENROLLING",
  "BURN_IN",
  "IMPAIRED",
  "QUARANTINED",
  "FAILED",
  "STALE",
  "UNKNOWN",
] as const;
export const OperationalStatus = z.enum(OPERATIONAL_STATUSES);
export type OperationalStatus = z.infer<typeof OperationalStatus>;

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

export interface DeviceObservations {
  netbox: {
    status: "planned" | "staged" | "active" | "offline" | "failed" | "inventory" | "decommissioning";
    /** NetBox no longer lists it */
    missing: boolean;
    observedAt: Date | null;
  };
  ironic: null | {
    provisionState: string | null;
    targetProvisionState: string | null;
    powerState: string | null;
    maintenance: boolean;
    maintenanceReason: string | null;
    lastError: string | null;
    fault: string | null;
    observedAt: Date;
  };
  slurm: null | {
    /** Upper-case base state as reported by slurmrestd, e.g. "IDLE", "ALLOCATED", "MIXED", "DOWN", "DRAIN", "FAIL", "UNKNOWN" */
    state: string | null;
    /** e.g. ["DRAIN", "NOT_RESPONDING", "RESERVED", "MAINTENANCE"] */
    flags: string[];
    reason: string | null;
    observedAt: Date;
  };
  health: null | {
    status: "ok" | "warning" | "critical" | "unknown";
    conditions: { name: string; status: string; message?: string }[];
    observedAt: Date;
  };
  operator: { cordoned: boolean; cordonReason: string | null };
  /** Kind of the device's active job, if any (jobs arrive later): "ENROL" | "UNENROL" | "BURN_IN" | "RELEASE" | "TEARDOWN" | "REIMAGE" | "REPAIR" | "NODE_SWAP" */
  activeJobKind?: string | null;
}

export interface DeriveOptions {
  now: Date;
  staleAfterMs: number;
  previous?: Condition[] | null;
}

export interface DerivedStatus {
  operationalStatus: OperationalStatus;
  conditions: Condition[];
}

/** Ironic provision states that mean the last operation failed. */
export const IRONIC_FAILED_STATES: readonly string[] = [
  "clean failed",
  "deploy failed",
  "inspect failed",
  "rescue failed",
  "unrescue failed",
  "error",
  "adopt failed",
  "service failed",
];
/** Ironic provision states on the way into (or back to) `available`. */
export const IRONIC_ENROLLING_STATES: readonly string[] = [
  "enroll",
  "verifying",
  "manageable",
  "inspecting",
  "inspect wait",
  "cleaning",
  "clean wait",
  "clean hold",
  "adopting",
];
/** Ironic provision states in which an instance owns the node. */
export const IRONIC_ALLOCATED_STATES: readonly string[] = [
  "active",
  "deploying",
  "wait call-back",
  "deploy wait",
  "deploy hold",
  "deleting",
  "rescue",
  "rescuing",
  "rescue wait",
  "unrescuing",
  "servicing",
  "service wait",
  "service hold",
];
const IRONIC_SETTLED_STATES: readonly string[] = ["available", "active"];

const SLURM_FAILED = ["FAIL"];
const SLURM_IMPAIRED = ["DOWN", "DRAIN", "DRAINING", "DRAINED", "NOT_RESPONDING"];
const SLURM_BUSY = ["ALLOCATED", "MIXED", "COMPLETING"];
const HEALTHY_CHECK_STATUSES = ["ok", "pass", "passed", "true", "healthy"];

type Obs = DeviceObservations;
type ConditionBody = Omit<Condition, "type" | "lastTransitionTime">;

/** "clean failed" → "CleanFailed", "NOT_RESPONDING" → "NotResponding". */
const camel = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join("");

/** NetBox's fields only count once NetBox has actually observed the device. */
const netboxSeen = (obs: Obs) => (obs.netbox.observedAt === null ? null : obs.netbox);

/** SLURM state and flags as one upper-case set (see the header on why both). */
function slurmWords(obs: Obs): Set<string> {
  if (!obs.slurm) return new Set();
  const words = obs.slurm.state === null ? obs.slurm.flags : [obs.slurm.state, ...obs.slurm.flags];
  return new Set(words.map((w) => w.toUpperCase()));
}
const slurmHasAny = (obs: Obs, words: string[]) => {
  const set = slurmWords(obs);
  return words.some((w) => set.has(w));
};
const ironicIn = (obs: Obs, states: readonly string[]) => {
  const s = obs.ironic?.provisionState?.toLowerCase();
  return s !== undefined && states.includes(s);
};

/** Every source that has observed the device with the age of its last observation. */
function observationAges(obs: Obs, now: Date): { source: string; ageMs: number }[] {
  const seen: [string, Date | null | undefined][] = [
    ["NetBox", obs.netbox.observedAt],
    ["Ironic", obs.ironic?.observedAt],
    ["SLURM", obs.slurm?.observedAt],
    ["health checker", obs.health?.observedAt],
  ];
  return seen.flatMap(([source, at]) => (at ? [{ source, ageMs: now.getTime() - at.getTime() }] : []));
}

const staleSources = (obs: Obs, now: Date, staleAfterMs: number) =>
  observationAges(obs, now).filter((a) => a.ageMs > staleAfterMs);

/**
 * True when a source that has observed the device last did so more than `staleAfterMs` before
 * `now`. Exactly `staleAfterMs` old is not stale; a source that never observed it is ignored.
 */
export function isStale(obs: DeviceObservations, now: Date, staleAfterMs: number): boolean {
  return staleSources(obs, now, staleAfterMs).length > 0;
}

function isFailed(obs: Obs): boolean {
  return (
    netboxSeen(obs)?.status === "failed" ||
    Boolean(obs.ironic?.fault) ||
    ironicIn(obs, IRONIC_FAILED_STATES) ||
    slurmHasAny(obs, SLURM_FAILED) ||
    obs.health?.status === "critical"
  );
}

function isImpaired(obs: Obs): boolean {
  const nb = netboxSeen(obs);
  return (
    obs.ironic?.maintenance === true ||
    slurmHasAny(obs, SLURM_IMPAIRED) ||
    obs.health?.status === "warning" ||
    nb?.status === "offline" ||
    nb?.missing === true
  );
}

function isEnrolling(obs: Obs): boolean {
  const nb = netboxSeen(obs);
  const planned = nb !== null && ["planned", "staged", "inventory"].includes(nb.status);
  return obs.activeJobKind === "ENROL" || ironicIn(obs, IRONIC_ENROLLING_STATES) || (planned && obs.ironic === null);
}

function isAvailable(obs: Obs): boolean {
  const nb = netboxSeen(obs);
  if (nb?.status === "decommissioning") return false;
  const slurmIdle = obs.slurm?.state?.toUpperCase() === "IDLE";
  if (obs.ironic) return ironicIn(obs, ["available"]) && (obs.slurm === null || slurmIdle);
  return nb?.status === "active" && slurmIdle;
}

function deriveOperationalStatus(obs: Obs, now: Date, staleAfterMs: number): OperationalStatus {
  if (obs.operator.cordoned) return "QUARANTINED";
  if (isStale(obs, now, staleAfterMs)) return "STALE";
  if (isFailed(obs)) return "FAILED";
  if (isImpaired(obs)) return "IMPAIRED";
  if (obs.activeJobKind === "BURN_IN") return "BURN_IN";
  if (isEnrolling(obs)) return "ENROLLING";
  if (ironicIn(obs, IRONIC_ALLOCATED_STATES) || slurmHasAny(obs, SLURM_BUSY)) return "ALLOCATED";
  if (isAvailable(obs)) return "AVAILABLE";
  return "UNKNOWN";
}

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
function stamp(type: ConditionType, body: ConditionBody, opts: DeriveOptions): Condition {
  const prev = opts.previous?.find((c) => c.type === type);
  const lastTransitionTime = prev && prev.status === body.status ? prev.lastTransitionTime : opts.now.toISOString();
  return { type, ...body, lastTransitionTime };
}

/** Derives the operational status and the six conditions; see the header for the rules. */
export function deriveDeviceStatus(obs: DeviceObservations, opts: DeriveOptions): DerivedStatus {
  const { now, staleAfterMs } = opts;
  const bodies: Record<ConditionType, ConditionBody> = {
    Inventoried: inventoried(obs),
    Provisioned: provisioned(obs),
    Schedulable: schedulable(obs),
    Healthy: healthy(obs),
    Cordoned: cordoned(obs),
    Fresh: fresh(obs, now, staleAfterMs),
  };
  return {
    operationalStatus: deriveOperationalStatus(obs, now, staleAfterMs),
    conditions: CONDITION_TYPES.map((type) => stamp(type, bodies[type], opts)),
  };
}
