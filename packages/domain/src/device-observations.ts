/**
 * What the sources observed of a device, as the status and condition derivations read it, and
 * the Ironic and SLURM state vocabularies they classify (see device-status.ts for the rules).
 */

import { slurmNodeWords } from "./slurm-nodes.ts";
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
  /** Kind of the device's active job, if any (jobs arrive later): "ENROL" | "UNENROL" | "BURN_IN" | "RELEASE" | "TEARDOWN" | "REIMAGE" | "IMAGE_NODE" | "REPAIR" | "NODE_SWAP" */
  activeJobKind?: string | null;
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
export const IRONIC_SETTLED_STATES: readonly string[] = ["available", "active"];

export const HEALTHY_CHECK_STATUSES = ["ok", "pass", "passed", "true", "healthy"];

export type Obs = DeviceObservations;

/** "clean failed" → "CleanFailed", "NOT_RESPONDING" → "NotResponding". */
export const camel = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join("");

/** NetBox's fields only count once NetBox has actually observed the device. */
export const netboxSeen = (obs: Obs) => (obs.netbox.observedAt === null ? null : obs.netbox);

/** SLURM state and flags as one upper-case set (see the header on why both). */
export function slurmWords(obs: Obs): Set<string> {
  return new Set(obs.slurm ? slurmNodeWords(obs.slurm.state, obs.slurm.flags) : []);
}
export const slurmHasAny = (obs: Obs, words: readonly string[]) => {
  const set = slurmWords(obs);
  return words.some((w) => set.has(w));
};
export const ironicIn = (obs: Obs, states: readonly string[]) => {
  const s = obs.ironic?.provisionState?.toLowerCase();
  return s !== undefined && states.includes(s);
};

/** Every source that has observed the device with the age of its last observation. */
export function observationAges(obs: Obs, now: Date): { source: string; ageMs: number }[] {
  // Plainly: every derivation of every device a reflection writes asks this (three per device).
  const t = now.getTime();
  const ages: { source: string; ageMs: number }[] = [];
  if (obs.netbox.observedAt) ages.push({ source: "NetBox", ageMs: t - obs.netbox.observedAt.getTime() });
  if (obs.ironic?.observedAt) ages.push({ source: "Ironic", ageMs: t - obs.ironic.observedAt.getTime() });
  if (obs.slurm?.observedAt) ages.push({ source: "SLURM", ageMs: t - obs.slurm.observedAt.getTime() });
  if (obs.health?.observedAt) ages.push({ source: "health checker", ageMs: t - obs.health.observedAt.getTime() });
  return ages;
}

export const staleSources = (obs: Obs, now: Date, staleAfterMs: number) =>
  observationAges(obs, now).filter((a) => a.ageMs > staleAfterMs);
