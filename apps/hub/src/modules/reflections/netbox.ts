/**
 * The NetBox reflection: NetBox is the source of truth for what hardware exists (contract,
 * "Reflection semantics"). Unlike the other sources it creates: devices it lists that the hub
 * does not know, and the roles, types, locations and racks they reference. A device NetBox no
 * longer lists is marked `netbox.missing`, never deleted: its history, jobs and observations
 * from the other sources stay, and it comes back as it was if NetBox lists it again.
 *
 * Devices match by NetBox id, then by name (a device re-created in NetBox keeps its hub
 * identity). Everything runs in the caller's transaction, in bulk: one statement per kind of
 * write, whatever the number of devices.
 */
import { sameJson, type NetboxItem, type ReflectionResult } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import { canonicalJson } from "../../lib/canonical-json.ts";
import type { ChangeContext } from "../../lib/context.ts";
import { recordChanges } from "../../changes/recorder.ts";
import type { DeviceBase } from "../../db/device-columns.ts";
import { deviceRows } from "../devices/public.ts";
import type { DeviceService } from "../devices/service.ts";
import { storedStatus } from "../devices/public.ts";
import { upsertReferences, type References, type RoleClassMapping } from "./netbox-references.ts";
import { NETBOX_COLUMNS, reflectionRepo, type NetboxDevice, type NetboxInterface } from "./repo.ts";

/** Interfaces as one comparable value: NetBox's order and MAC case do not count. */
const ifaceKey = (list: readonly NetboxInterface[]) =>
  canonicalJson(
    [...list]
      .map((i) => ({
        name: i.name,
        type: i.type,
        macAddress: i.macAddress?.toUpperCase() ?? null,
        ibGuid: i.ibGuid,
        mgmtOnly: i.mgmtOnly,
        peerDevice: i.peerDevice,
        peerInterface: i.peerInterface,
        netboxId: i.netboxId,
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  );

interface Update {
  current: NetboxDevice;
  changes: Record<string, unknown>;
  /** Interfaces changed: the device is written even when its columns are equal. */
  force: boolean;
  interfaces?: NetboxInterface[] | undefined;
}

interface Plan {
  toCreate: { item: NetboxItem; fields: Record<string, unknown> }[];
  toUpdate: Update[];
  seen: Set<string>;
}

/** The device columns an item sets, with the ids of what it references. */
function fieldsOf(item: NetboxItem, refs: References): Record<string, unknown> {
  return {
    name: item.name,
    serial: item.serial,
    assetTag: item.assetTag,
    rackId: item.rack ? refs.racks.get(item.rack.name)! : null,
    rackPosition: item.rackPosition,
    deviceTypeId: item.deviceType ? refs.types.get(item.deviceType.slug)! : null,
    deviceRoleId: refs.roles.get(item.role.slug)!,
    netboxId: item.netboxId,
    netboxStatus: item.status,
    netboxMissing: false,
    platformClass: item.platformClass,
    tags: [...item.tags].sort(),
    bmcAddress: item.bmcAddress,
  };
}

/** Matches items to the site's devices: which to create, which changed, which are unchanged or duplicates. */
function plan(
  items: NetboxItem[],
  existing: NetboxDevice[],
  refs: References,
  observedAt: Date,
  result: ReflectionResult,
): Plan {
  const byNetboxId = new Map(existing.filter((d) => d.netboxId !== null).map((d) => [d.netboxId!, d]));
  const byName = new Map(existing.map((d) => [d.name, d]));
  const out: Plan = { toCreate: [], toUpdate: [], seen: new Set() };
  const seenNames = new Set<string>();
  for (const item of items) {
    const fields = fieldsOf(item, refs);
    const device = byNetboxId.get(item.netboxId) ?? byName.get(item.name);
    if ((device && out.seen.has(device.id)) || seenNames.has(item.name)) {
      // Two NetBox devices claiming one hub device (or one name): the second is reported.
      result.unmatched++;
      if (result.unmatchedItems.length < 100) result.unmatchedItems.push(item.name);
      continue;
    }
    seenNames.add(item.name);
    if (!device) {
      out.toCreate.push({ item, fields });
      continue;
    }
    out.seen.add(device.id);
    const current: Record<string, unknown> = {
      ...device,
      netboxObservedAt: observedAt,
      rackPosition: device.rackPosition === null ? null : Number(device.rackPosition),
    };
    const ifaceChanged = ifaceKey(device.interfaces) !== ifaceKey(item.interfaces);
    const fieldChanged = Object.entries(fields).some(([k, v]) => !sameJson(current[k], v));
    if (!fieldChanged && !ifaceChanged) result.unchanged++;
    else
      out.toUpdate.push({
        current: device,
        changes: { ...fields, netboxObservedAt: observedAt },
        force: ifaceChanged,
        interfaces: ifaceChanged ? item.interfaces : undefined,
      });
  }
  keepHeldNames(out, existing, result);
  return out;
}

/**
 * A rename to a name another device of the site keeps (one NetBox no longer lists, or one this
 * push leaves as it is) cannot be applied: names are unique at a site. The device keeps its name,
 * its other changes apply, and the push reports the conflict. Names that only move between
 * devices of this push (a swap, a rotation) are fine: `applyUpdates` parks them first.
 */
function keepHeldNames(out: Plan, existing: NetboxDevice[], result: ReflectionResult): void {
  const renaming = new Set(out.toUpdate.filter((u) => renameOf(u) !== undefined).map((u) => u.current.id));
  const held = new Map(existing.filter((d) => !renaming.has(d.id)).map((d) => [d.name, d.id]));
  for (let dropped = true; dropped;) {
    dropped = false;
    for (const u of out.toUpdate) {
      const name = renameOf(u);
      if (name === undefined || !held.has(name)) continue;
      // The device keeps its name, which may in turn block another rename: go round again.
      u.changes = { ...u.changes, name: u.current.name };
      held.set(u.current.name, u.current.id);
      (result.conflicts ??= []).push({
        resource: "device",
        slug: u.current.name,
        field: "name",
        hub: u.current.name,
        pushed: name,
      });
      dropped = true;
    }
  }
}

/** The new name an update gives its device, if it renames it. */
const renameOf = (u: Update): string | undefined =>
  typeof u.changes.name === "string" && u.changes.name !== u.current.name ? u.changes.name : undefined;

/** Marks the devices NetBox stopped listing missing, then writes the changed ones; returns how many changed. */
async function applyUpdates(
  tx: Db,
  ctx: ChangeContext,
  devices: DeviceService,
  missing: NetboxDevice[],
  toUpdate: Update[],
): Promise<number> {
  // Interfaces of changed devices are replaced before the device rows are re-read, so the
  // audit record and feed event show them.
  await reflectionRepo.replaceInterfaces(
    tx,
    toUpdate.filter((u) => u.interfaces).map((u) => ({ deviceId: u.current.id, interfaces: u.interfaces! })),
  );
  // Locked, as applyMany requires: a job report changing one of these devices meanwhile has
  // committed or waits, and each change is compared with the row as it now is.
  const full = new Map(
    (
      await deviceRows.lockByIds(
        tx,
        [...missing, ...toUpdate.map((u) => u.current)].map((d) => d.id),
      )
    ).map((r) => [r.id, r]),
  );
  // Missing first: a vanished device may hold the name a listed one now takes.
  await devices.applyMany(
    tx,
    ctx,
    missing.map((d) => ({ current: full.get(d.id)!, changes: { netboxMissing: true } })),
    "netbox",
    NETBOX_COLUMNS,
  );
  // Renamed devices give up their names first, so names can move between them (two devices
  // swapping names in NetBox) without meeting the site's unique index halfway.
  await reflectionRepo.parkNames(
    tx,
    toUpdate.filter((u) => renameOf(u) !== undefined).map((u) => u.current.id),
  );
  return devices.applyMany(
    tx,
    ctx,
    toUpdate.map((u) => ({ current: full.get(u.current.id)!, changes: u.changes as never, force: u.force })),
    "netbox",
    NETBOX_COLUMNS,
  );
}

/** Creates the devices NetBox lists and the hub does not know, with their interfaces; returns how many. */
async function createDevices(
  tx: Db,
  ctx: ChangeContext,
  devices: DeviceService,
  siteId: string,
  toCreate: Plan["toCreate"],
  observedAt: Date,
): Promise<number> {
  if (!toCreate.length) return 0;
  const now = new Date();
  const rows = toCreate.map(({ fields }) => {
    const draft = {
      ...fields,
      siteId,
      netboxObservedAt: observedAt,
      cordoned: false,
      cordonReason: null,
      slurmStateFlags: [],
      conditions: [],
      healthConditions: null,
      ironicObservedAt: null,
      slurmObservedAt: null,
      healthObservedAt: null,
    } as unknown as DeviceBase;
    const derived = storedStatus(draft, now);
    return { ...fields, netboxObservedAt: observedAt, ...derived };
  });
  const idByName = await reflectionRepo.insertDevices(tx, siteId, rows);
  await reflectionRepo.insertInterfaces(
    tx,
    toCreate.map(({ item }) => ({ deviceId: idByName.get(item.name)!, interfaces: item.interfaces })),
  );
  const created = await deviceRows.findByIds(tx, [...idByName.values()]);
  await recordChanges(
    tx,
    ctx,
    created.map((row) => ({
      resourceType: "device",
      resourceId: row.id,
      siteId,
      verb: "created",
      before: null,
      after: devices.toDevice(row),
    })),
  );
  return created.length;
}

export async function applyNetbox(
  tx: Db,
  ctx: ChangeContext,
  devices: DeviceService,
  siteId: string,
  items: NetboxItem[],
  observedAt: Date,
  roleClasses: RoleClassMapping,
): Promise<ReflectionResult> {
  const result: ReflectionResult = {
    created: 0,
    updated: 0,
    unchanged: 0,
    missing: 0,
    unmatched: 0,
    unmatchedItems: [],
  };
  const refs = await upsertReferences(tx, ctx, siteId, items, roleClasses);
  result.conflicts = refs.conflicts;
  // Narrow read of every device of the site: what matching and comparing need. Full rows (with
  // relations) are read only for the devices that change.
  const existing = await reflectionRepo.netboxDevices(tx, siteId);
  const planned = plan(items, existing, refs, observedAt, result);
  const { toCreate, seen } = planned;
  const vanished = existing.filter((d) => !seen.has(d.id) && !d.netboxMissing && d.netboxObservedAt !== null);
  // Devices a job observed in NetBox after this push's moment (an ENROL's activation) keep
  // what the job recorded (see lockObservedAfter).
  const newer = await deviceRows.lockObservedAfter(
    tx,
    "netboxObservedAt",
    [...vanished, ...planned.toUpdate.map((u) => u.current)].map((d) => d.id),
    observedAt,
  );
  const missing = vanished.filter((d) => !newer.has(d.id));
  const toUpdate = planned.toUpdate.filter((u) => !newer.has(u.current.id));
  result.unchanged += planned.toUpdate.length - toUpdate.length;
  result.missing = missing.length;
  result.updated = await applyUpdates(tx, ctx, devices, missing, toUpdate);
  result.unchanged += toUpdate.length - result.updated;
  result.created = await createDevices(tx, ctx, devices, siteId, toCreate, observedAt);
  await deviceRows.markObserved(tx, "netboxObservedAt", [...seen], observedAt);
  return result;
}
