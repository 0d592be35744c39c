/**
 * Ironic, SLURM and health reflections annotate devices NetBox created: items are matched to
 * devices (Ironic: node UUID, then name, then serial; SLURM: node name, then the device the agent
 * names or else the node's own name; health: device name), and only what changed is written, in bulk, through the device service
 * (history, audit, feed). Devices the source observed before and no longer lists have that
 * source's fields cleared (`missing`).
 */
import { BadRequest } from "@fm/domain";
import type { HealthItem, IronicItem, ReflectionResult, ReflectionSource, SlurmItem } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { deviceRows, type BulkColumn } from "../devices/public.ts";
import { differs, type DeviceService } from "../devices/public.ts";
import { reflectionRepo, type AnnotatedDevice as DeviceRow } from "./repo.ts";

type Changes = Parameters<DeviceService["apply"]>[3];

export interface SourceAdapter {
  /** Every device column this source writes (its fields, and its observed-at). */
  columns: readonly BulkColumn[];
  key(item: unknown): string;
  match(item: unknown, devices: DeviceIndex): DeviceRow | undefined;
  /** The device's new fields; `device` and `observedAt` for fields that depend on what it was. */
  changes(item: unknown, device: DeviceRow, observedAt: Date): Changes;
  observedBefore(d: DeviceRow): boolean;
  observedField: "ironicObservedAt" | "slurmObservedAt" | "healthObservedAt";
  /** The Ironic node UUID an item carries: unique in the fleet, so another site may hold it. */
  nodeUuid?(item: unknown): string;
  /**
   * Whether a push decides the discrepancies of devices the source has never reported (Ironic:
   * a NetBox-active device without an Ironic node), whatever path brought those devices in.
   */
  judgesUnreported?: true;
}

class DeviceIndex {
  readonly byName = new Map<string, DeviceRow>();
  readonly byNode = new Map<string, DeviceRow>();
  readonly bySerial = new Map<string, DeviceRow>();
  readonly bySlurm = new Map<string, DeviceRow>();
  constructor(readonly all: DeviceRow[]) {
    for (const d of all) {
      this.byName.set(d.name, d);
      if (d.ironicNodeUuid) this.byNode.set(d.ironicNodeUuid, d);
      if (d.serial) this.bySerial.set(d.serial, d);
      if (d.slurmNodeName) this.bySlurm.set(d.slurmNodeName, d);
    }
  }
}

function ironic(instance: "overcloud" | "undercloud"): SourceAdapter {
  return {
    observedField: "ironicObservedAt",
    columns: [
      { field: "ironicInstance", type: "varchar" },
      { field: "ironicNodeUuid", type: "uuid" },
      { field: "ironicProvisionState", type: "varchar" },
      { field: "ironicTargetProvisionState", type: "varchar" },
      { field: "ironicPowerState", type: "varchar" },
      { field: "ironicMaintenance", type: "boolean" },
      { field: "ironicMaintenanceReason", type: "text" },
      { field: "ironicLastError", type: "text" },
      { field: "ironicFault", type: "varchar" },
      { field: "ironicObservedAt", type: "timestamptz" },
    ],
    key: (i) => (i as IronicItem).name ?? (i as IronicItem).uuid,
    match: (i, idx) => {
      const n = i as IronicItem;
      return (
        idx.byNode.get(n.uuid) ??
        (n.name ? idx.byName.get(n.name) : undefined) ??
        (n.serial ? idx.bySerial.get(n.serial) : undefined)
      );
    },
    changes: (i) => {
      const n = i as IronicItem;
      return {
        ironicInstance: instance,
        ironicNodeUuid: n.uuid,
        ironicProvisionState: n.provisionState,
        ironicTargetProvisionState: n.targetProvisionState,
        ironicPowerState: n.powerState,
        ironicMaintenance: n.maintenance,
        ironicMaintenanceReason: n.maintenanceReason,
        ironicLastError: n.lastError,
        ironicFault: n.fault,
      };
    },
    observedBefore: (d) => d.ironicInstance === instance && d.ironicObservedAt !== null,
    nodeUuid: (i) => (i as IronicItem).uuid,
    judgesUnreported: true,
  };
}

const slurm: SourceAdapter = {
  observedField: "slurmObservedAt",
  columns: [
    { field: "slurmNodeName", type: "varchar" },
    { field: "slurmState", type: "varchar" },
    { field: "slurmStateFlags", type: "text[]" },
    { field: "slurmReason", type: "text" },
    { field: "slurmPartitions", type: "text[]" },
    { field: "slurmObservedAt", type: "timestamptz" },
  ],
  key: (i) => (i as SlurmItem).name,
  // The node recorded on a device first, then the device the agent names (deviceNamePrefix), or the node's own name.
  match: (i, idx) => {
    const n = i as SlurmItem;
    const byName = n.device === undefined ? n.name : n.device;
    return idx.bySlurm.get(n.name) ?? (byName === null ? undefined : idx.byName.get(byName));
  },
  changes: (i) => {
    const n = i as SlurmItem;
    return {
      slurmNodeName: n.name,
      slurmState: n.state,
      slurmStateFlags: n.flags,
      slurmReason: n.reason,
      slurmPartitions: n.partitions,
    };
  },
  observedBefore: (d) => d.slurmObservedAt !== null,
};

const health: SourceAdapter = {
  observedField: "healthObservedAt",
  columns: [
    { field: "healthStatus", type: "varchar" },
    { field: "healthConditions", type: "jsonb" },
    { field: "healthObservedAt", type: "timestamptz" },
    { field: "healthSince", type: "timestamptz" },
  ],
  key: (i) => (i as HealthItem).name,
  match: (i, idx) => idx.byName.get((i as HealthItem).name),
  // healthSince moves only with the status: the impairment windows count from it.
  changes: (i, d, observedAt) => {
    const { status, conditions } = i as HealthItem;
    return {
      healthStatus: status,
      healthConditions: conditions,
      ...(d.healthStatus === status ? {} : { healthSince: observedAt }),
    };
  },
  observedBefore: (d) => d.healthObservedAt !== null,
};

/** A source's fields as they are once it no longer lists the device: unset (empty lists). */
const clearedOf = (columns: readonly BulkColumn[]): Changes =>
  Object.fromEntries(columns.map((c) => [c.field, c.type.endsWith("[]") ? [] : null]));

export function adapterFor(source: ReflectionSource): SourceAdapter {
  if (source === "ironic-overcloud") return ironic("overcloud");
  if (source === "ironic-undercloud") return ironic("undercloud");
  if (source === "slurm") return slurm;
  if (source === "health") return health;
  throw new BadRequest("source_not_supported", `Source '${source}' has no annotation adapter`);
}

/** Ironic, SLURM and health: annotate devices that exist; clear what a source stopped listing. */
export async function applyAnnotations(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  adapter: SourceAdapter,
  source: ReflectionSource,
  siteId: string,
  items: unknown[],
  observedAt: Date,
  /** Receives the key of every item that matches no device (the result names only the first 100). */
  unmatchedKeys: string[] = [],
  /**
   * Receives the id of every device whose fields this push may have changed: written, cleared,
   * or observed by this source for the first time (what its discrepancies depend on).
   */
  touched: Set<string> = new Set(),
): Promise<ReflectionResult> {
  // Only the columns matching and comparing need: most devices of most pushes are unchanged,
  // and their full rows (conditions, tags, notes …) are never looked at.
  const index = new DeviceIndex(
    await reflectionRepo.annotatedDevices(
      tx,
      siteId,
      adapter.columns.map((c) => c.field),
    ),
  );
  const result: ReflectionResult = {
    created: 0,
    updated: 0,
    unchanged: 0,
    missing: 0,
    unmatched: 0,
    unmatchedItems: [],
  };
  const seen = new Set<string>();
  const entries: { id: string; changes: Changes }[] = [];
  // A node another site's device holds (moved between sites, or a careless agent) cannot be
  // recorded here as well: the item is reported unmatched until that site's agent lets it go.
  // A node UUID is unique in the fleet, so only those no device of this site holds are asked
  // about (in the steady state, none).
  const heldElsewhere = adapter.nodeUuid
    ? await reflectionRepo.nodeUuidsHeldElsewhere(
        tx,
        siteId,
        items.map(adapter.nodeUuid).filter((uuid) => !index.byNode.has(uuid.toLowerCase())),
      )
    : new Set<string>();
  for (const item of items) {
    const device = heldElsewhere.has(adapter.nodeUuid?.(item).toLowerCase() ?? "")
      ? undefined
      : adapter.match(item, index);
    if (!device || seen.has(device.id)) {
      result.unmatched++;
      unmatchedKeys.push(adapter.key(item));
      if (result.unmatchedItems.length < 100) result.unmatchedItems.push(adapter.key(item));
      continue;
    }
    seen.add(device.id);
    if (device[adapter.observedField] === null) touched.add(device.id);
    // The changes never carry the observed-at: observing alone is not a change to record.
    const changes = adapter.changes(item, device, observedAt);
    if (differs(device, changes)) entries.push({ id: device.id, changes });
    else result.unchanged++;
  }
  const vanished = index.all.filter((d) => !seen.has(d.id) && adapter.observedBefore(d));
  // In the steady state, only the devices the source does not know (few): a device created by
  // any path, even one that wrote no discrepancy of its own, is judged by the next push.
  if (adapter.judgesUnreported)
    for (const d of index.all) if (!seen.has(d.id) && d[adapter.observedField] === null) touched.add(d.id);
  // Full rows for the devices that change, locked: their status is derived from every field,
  // and their representation after the change is built from them.
  const full = new Map(
    (await deviceRows.lockByIds(tx, [...entries.map((e) => e.id), ...vanished.map((d) => d.id)])).map((r) => [r.id, r]),
  );
  // A device a job observed after this push's moment keeps what the job recorded (see
  // deviceRows.lockObservedAfter): an ENROL's new Ironic node is not cleared by a list read before it.
  const newer = (id: string) => (full.get(id)![adapter.observedField] ?? 0) > observedAt;
  const missing = vanished.filter((d) => !newer(d.id));
  const changing = entries.filter((e) => !newer(e.id));
  result.unchanged += entries.length - changing.length;
  for (const d of [...missing, ...changing]) touched.add(d.id);
  // Missing first: a node UUID a vanished device held may now belong to another device.
  const cleared = clearedOf(adapter.columns);
  await devices.applyMany(
    tx,
    ctx,
    missing.map((d) => ({ current: full.get(d.id)!, changes: cleared })),
    source,
    adapter.columns,
  );
  result.missing = missing.length;
  result.updated = await devices.applyMany(
    tx,
    ctx,
    changing.map((e) => ({ current: { ...full.get(e.id)!, [adapter.observedField]: observedAt }, changes: e.changes })),
    source,
    adapter.columns,
  );
  result.unchanged += changing.length - result.updated;
  await deviceRows.markObserved(tx, adapter.observedField, [...seen], observedAt);
  return result;
}
