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
 * The six conditions are derived in device-conditions.ts; the observations, the sources' state
 * lists and the helpers both read them with are in device-observations.ts.
 */
import { z } from "zod";
import { deriveConditions, type Condition, type DeriveOptions } from "./device-conditions.ts";
import {
  IRONIC_ALLOCATED_STATES,
  IRONIC_ENROLLING_STATES,
  IRONIC_FAILED_STATES,
  ironicIn,
  netboxSeen,
  slurmHasAny,
  staleSources,
  type DeviceObservations,
  type Obs,
} from "./device-observations.ts";
import { SLURM_BUSY, SLURM_FAILED, SLURM_IMPAIRED } from "./slurm-nodes.ts";

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

export interface DerivedStatus {
  operationalStatus: OperationalStatus;
  conditions: Condition[];
}

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
/** Derives the operational status and the six conditions; see the header for the rules. */
export function deriveDeviceStatus(obs: DeviceObservations, opts: DeriveOptions): DerivedStatus {
  return {
    operationalStatus: deriveOperationalStatus(obs, opts.now, opts.staleAfterMs),
    conditions: deriveConditions(obs, opts),
  };
}
