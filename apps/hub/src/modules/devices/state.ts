/**
 * From a device row to what the domain's status function needs, and from a device row to its
 * API representation. One place, so the stored status, the read-time status and the history
 * all come from the same derivation.
 */
import {
  type BurnInStatus,
  deriveDeviceStatus,
  type Condition,
  type Device,
  type DeviceBrief,
  type DeviceObservations,
  type DerivedStatus,
} from "@fm/domain";
import type { DeviceBase } from "../../db/device-columns.ts";
import type { DeviceBriefRow, DeviceJsonRow, DeviceRow } from "./repo.ts";
import { isoOrNull } from "../../lib/timestamps.ts";

/** The columns a device's status is derived from (observationsOf, and the stored conditions). */
export type ObservedColumns = Pick<
  DeviceBase,
  | "netboxStatus"
  | "netboxMissing"
  | "netboxObservedAt"
  | "ironicProvisionState"
  | "ironicTargetProvisionState"
  | "ironicPowerState"
  | "ironicMaintenance"
  | "ironicMaintenanceReason"
  | "ironicLastError"
  | "ironicFault"
  | "ironicObservedAt"
  | "slurmState"
  | "slurmStateFlags"
  | "slurmReason"
  | "slurmObservedAt"
  | "healthStatus"
  | "healthConditions"
  | "healthObservedAt"
  | "cordoned"
  | "cordonReason"
  | "conditions"
>;

export function observationsOf(d: ObservedColumns, activeJobKind: string | null = null): DeviceObservations {
  return {
    netbox: { status: d.netboxStatus, missing: d.netboxMissing, observedAt: d.netboxObservedAt },
    ironic: d.ironicObservedAt
      ? {
          provisionState: d.ironicProvisionState,
          targetProvisionState: d.ironicTargetProvisionState,
          powerState: d.ironicPowerState,
          maintenance: d.ironicMaintenance ?? false,
          maintenanceReason: d.ironicMaintenanceReason,
          lastError: d.ironicLastError,
          fault: d.ironicFault,
          observedAt: d.ironicObservedAt,
        }
      : null,
    slurm: d.slurmObservedAt
      ? { state: d.slurmState, flags: d.slurmStateFlags, reason: d.slurmReason, observedAt: d.slurmObservedAt }
      : null,
    health: d.healthObservedAt
      ? {
          status: (d.healthStatus ?? "unknown") as "ok" | "warning" | "critical" | "unknown",
          conditions: (d.healthConditions ?? []) as { name: string; status: string }[],
          observedAt: d.healthObservedAt,
        }
      : null,
    operator: { cordoned: d.cordoned, cordonReason: d.cordonReason },
    activeJobKind,
  };
}

/**
 * The conditions a row stores (the `conditions` jsonb column, written only from
 * deriveDeviceStatus's output): the one place the column's JSON is read as what it holds.
 */
export const conditionsOf = (d: Pick<ObservedColumns, "conditions">): Condition[] => d.conditions as Condition[];

/** The status stored with the row: everything but staleness, which depends on the reader's clock. */
export function storedStatus(d: ObservedColumns, now: Date): DerivedStatus {
  return deriveDeviceStatus(observationsOf(d), {
    now,
    staleAfterMs: Number.POSITIVE_INFINITY,
    previous: conditionsOf(d),
  });
}

/** A device is stale when its status says so or a source's observation is no longer fresh. */
const isStale = (derived: DerivedStatus): boolean =>
  derived.operationalStatus === "STALE" || derived.conditions.some((c) => c.type === "Fresh" && c.status === "False");

export function toDevice(d: DeviceRow, now: Date, staleAfterMs: number): Device {
  const derived = deriveDeviceStatus(observationsOf(d), { now, staleAfterMs, previous: conditionsOf(d) });
  return {
    id: d.id,
    name: d.name,
    site: d.site,
    serial: d.serial,
    assetTag: d.assetTag,
    rack: d.rack ? { ...d.rack, position: d.rackPosition === null ? null : Number(d.rackPosition) } : null,
    deviceType: d.deviceType,
    role: d.deviceRole,
    platformClass: d.platformClass,
    tags: d.tags,
    bmcAddress: d.bmcAddress,
    interfaces: d.interfaces.map((i) => ({
      name: i.name,
      type: i.type,
      macAddress: i.macAddress,
      ibGuid: i.ibGuid,
      mgmtOnly: i.mgmtOnly,
      peerDevice: i.peerDevice,
      peerInterface: i.peerInterface,
    })),
    netbox: {
      id: d.netboxId,
      status: d.netboxStatus,
      missing: d.netboxMissing,
      observedAt: isoOrNull(d.netboxObservedAt),
    },
    ironic: {
      instance: d.ironicInstance as Device["ironic"]["instance"],
      nodeUuid: d.ironicNodeUuid,
      provisionState: d.ironicProvisionState,
      targetProvisionState: d.ironicTargetProvisionState,
      powerState: d.ironicPowerState,
      maintenance: d.ironicMaintenance,
      maintenanceReason: d.ironicMaintenanceReason,
      lastError: d.ironicLastError,
      fault: d.ironicFault,
      observedAt: isoOrNull(d.ironicObservedAt),
    },
    slurm: {
      nodeName: d.slurmNodeName,
      state: d.slurmState,
      stateFlags: d.slurmStateFlags,
      reason: d.slurmReason,
      partitions: d.slurmPartitions,
      observedAt: isoOrNull(d.slurmObservedAt),
    },
    health: {
      status: d.healthStatus,
      conditions: (d.healthConditions ?? []) as Device["health"]["conditions"],
      observedAt: isoOrNull(d.healthObservedAt),
    },
    cordoned: d.cordoned,
    cordonReason: d.cordonReason,
    cordonedBy: d.cordonedBy,
    cordonedAt: isoOrNull(d.cordonedAt),
    // A cordon without a recorded source is an operator's: impairment always records its own.
    cordonSource: d.cordoned ? ((d.cordonSource ?? "operator") as Device["cordonSource"]) : null,
    notes: d.notes,
    burnIn: burnInOf(d),
    operationalStatus: derived.operationalStatus,
    conditions: derived.conditions,
    stale: isStale(derived),
    version: d.version,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

/**
 * toDevice as JSON text, from a row whose representation PostgreSQL wrote (repo's JSON_COLUMNS):
 * the same bytes as JSON.stringify(toDevice(row, now, staleAfterMs)), with the read-time
 * derivation (operationalStatus, conditions, stale) and the health checks written here.
 */
export function toDeviceJson(d: DeviceJsonRow, now: Date, staleAfterMs: number): string {
  const derived = deriveDeviceStatus(observationsOf(d), {
    now,
    staleAfterMs,
    previous: conditionsOf(d),
  });
  const stale = isStale(derived);
  const health = `{"status":${JSON.stringify(d.healthStatus)},"conditions":${JSON.stringify(
    d.healthConditions ?? [],
  )},"observedAt":${d.healthObservedAt ? `"${d.healthObservedAt.toISOString()}"` : "null"}}`;
  // head `{…,"slurm":{…}}`, mid `{"cordoned":…,"burnIn":…}`, tail `{"version":…}`: joined as one object.
  return `${d.head.slice(0, -1)},"health":${health},${d.mid.slice(1, -1)},"operationalStatus":"${
    derived.operationalStatus
  }","conditions":${JSON.stringify(derived.conditions)},"stale":${stale},${d.tail.slice(1)}`;
}

/**
 * The brief representation. Its status is the full one's: the stored status (which depends on
 * the observations only), read as STALE when a source that observed the device last did so
 * before `staleBefore`, unless an operator quarantined it (deriveDeviceStatus's order).
 */
/** The device's last burn-in as the representations show it; null when it was never burnt in. */
function burnInOf(d: Pick<DeviceBase, "burnInStatus" | "burnInJobId" | "burnInAt">): Device["burnIn"] {
  return d.burnInStatus && d.burnInJobId && d.burnInAt
    ? { status: d.burnInStatus as BurnInStatus, jobId: d.burnInJobId, at: d.burnInAt.toISOString() }
    : null;
}

export function toDeviceBrief(d: DeviceBriefRow, staleBefore: Date): DeviceBrief {
  const stale = [d.netboxObservedAt, d.ironicObservedAt, d.slurmObservedAt, d.healthObservedAt].some(
    (t) => t !== null && t.getTime() < staleBefore.getTime(),
  );
  return {
    id: d.id,
    name: d.name,
    site: d.site,
    serial: d.serial,
    operationalStatus: stale && d.operationalStatus !== "QUARANTINED" ? "STALE" : d.operationalStatus,
    stale,
    cordoned: d.cordoned,
    cordonReason: d.cordonReason,
    cordonedBy: d.cordonedBy,
    cordonedAt: isoOrNull(d.cordonedAt),
    burnIn: burnInOf(d),
    updatedAt: d.updatedAt.toISOString(),
    netboxStatus: d.netboxStatus,
    provisionState: d.ironicProvisionState,
    failureReason: d.ironicLastError ?? d.ironicFault,
  };
}

/** Tracked fields: a change of any of these is written to the device's history. */
export const TRACKED: { field: string; read: (d: DeviceBase) => unknown }[] = [
  { field: "netboxStatus", read: (d) => d.netboxStatus },
  { field: "provisionState", read: (d) => d.ironicProvisionState },
  { field: "powerState", read: (d) => d.ironicPowerState },
  {
    field: "maintenance",
    read: (d) =>
      d.ironicMaintenance
        ? { on: true, reason: d.ironicMaintenanceReason }
        : d.ironicMaintenance === false
          ? { on: false }
          : null,
  },
  { field: "slurmState", read: (d) => (d.slurmState ? { state: d.slurmState, flags: d.slurmStateFlags } : null) },
  { field: "healthStatus", read: (d) => d.healthStatus },
  {
    field: "cordoned",
    read: (d) =>
      d.cordoned ? { cordoned: true, reason: d.cordonReason, source: d.cordonSource } : { cordoned: false },
  },
  { field: "operationalStatus", read: (d) => d.operationalStatus },
  { field: "burnIn", read: (d) => (d.burnInStatus ? { status: d.burnInStatus, jobId: d.burnInJobId } : null) },
];
