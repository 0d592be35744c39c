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
import { canonicalJson } from "../../lib/canonical-json.ts";
import type { NetboxItem, ReflectionResult } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import { bulkInsert, snakeCase } from "../../lib/bulk.ts";
import { recordChanges, type Change } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { deviceRepo, type BulkColumn, type DeviceRow } from "../devices/repo.ts";
import type { DeviceService } from "../devices/service.ts";
import { storedStatus } from "../devices/state.ts";

type Ctx = Pick<RequestContext, "principal" | "requestId">;

export const NETBOX_COLUMNS: readonly BulkColumn[] = [
  { field: "name", type: "varchar" },
  { field: "serial", type: "varchar" },
  { field: "assetTag", type: "varchar" },
  { field: "rackId", type: "uuid" },
  { field: "rackPosition", type: "numeric" },
  { field: "deviceTypeId", type: "uuid" },
  { field: "deviceRoleId", type: "uuid" },
  { field: "netboxId", type: "integer" },
  { field: "netboxStatus", type: "netbox_device_status" },
  { field: "netboxMissing", type: "boolean" },
  { field: "netboxObservedAt", type: "timestamptz" },
  { field: "platformClass", type: "varchar" },
  { field: "tags", type: "text[]" },
  { field: "bmcAddress", type: "varchar" },
];

const INTERFACE_COLUMNS = [
  { name: "device_id", type: "uuid" },
  { name: "name", type: "varchar" },
  { name: "type", type: "varchar" },
  { name: "mac_address", type: "varchar" },
  { name: "ib_guid", type: "varchar" },
  { name: "mgmt_only", type: "boolean" },
  { name: "peer_device", type: "varchar" },
  { name: "peer_interface", type: "varchar" },
  { name: "netbox_id", type: "integer" },
] as const;

type Iface = NetboxItem["interfaces"][number];
const ifaceKey = (
  list: readonly {
    name: string;
    type: string | null;
    macAddress: string | null;
    ibGuid: string | null;
    mgmtOnly: boolean;
    peerDevice: string | null;
    peerInterface: string | null;
    netboxId: number | null;
  }[],
) =>
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

const NARROW = {
  id: true,
  name: true,
  serial: true,
  assetTag: true,
  rackId: true,
  rackPosition: true,
  deviceTypeId: true,
  deviceRoleId: true,
  netboxId: true,
  netboxStatus: true,
  netboxMissing: true,
  netboxObservedAt: true,
  platformClass: true,
  tags: true,
  bmcAddress: true,
  interfaces: {
    select: {
      name: true,
      type: true,
      macAddress: true,
      ibGuid: true,
      mgmtOnly: true,
      peerDevice: true,
      peerInterface: true,
      netboxId: true,
    },
  },
} as const;
type NarrowDevice = Pick<
  DeviceRow,
  | "id"
  | "name"
  | "serial"
  | "assetTag"
  | "rackId"
  | "rackPosition"
  | "deviceTypeId"
  | "deviceRoleId"
  | "netboxId"
  | "netboxStatus"
  | "netboxMissing"
  | "netboxObservedAt"
  | "platformClass"
  | "tags"
  | "bmcAddress"
> & {
  interfaces: Pick<
    DeviceRow["interfaces"][number],
    "name" | "type" | "macAddress" | "ibGuid" | "mgmtOnly" | "peerDevice" | "peerInterface" | "netboxId"
  >[];
};

/** Roles, types, locations and racks the items reference, created or updated; returns their ids. */
async function upsertReferences(tx: Db, ctx: Ctx, siteId: string, items: NetboxItem[]) {
  const roles = new Map<string, string>();
  const roleChanges: Change[] = [];
  for (const r of new Map(items.map((i) => [i.role.slug, i.role])).values()) {
    const existing = await tx.deviceRole.findUnique({ where: { slug: r.slug } });
    if (!existing) {
      const row = await tx.deviceRole.create({
        data: { slug: r.slug, name: r.name, deviceClass: r.deviceClass, netboxId: r.netboxId },
      });
      roleChanges.push({
        resourceType: "device_role",
        resourceId: row.id,
        siteId: null,
        verb: "created",
        before: null,
        after: { id: row.id, slug: row.slug, name: row.name, deviceClass: row.deviceClass },
      });
      roles.set(r.slug, row.id);
    } else {
      if (existing.name !== r.name || existing.deviceClass !== r.deviceClass || existing.netboxId !== r.netboxId) {
        const row = await tx.deviceRole.update({
          where: { id: existing.id },
          data: { name: r.name, deviceClass: r.deviceClass, netboxId: r.netboxId },
        });
        roleChanges.push({
          resourceType: "device_role",
          resourceId: row.id,
          siteId: null,
          verb: "updated",
          before: { id: existing.id, slug: existing.slug, name: existing.name, deviceClass: existing.deviceClass },
          after: { id: row.id, slug: row.slug, name: row.name, deviceClass: row.deviceClass },
        });
      }
      roles.set(r.slug, existing.id);
    }
  }
  await recordChanges(tx, ctx, roleChanges);

  const types = new Map<string, string>();
  for (const t of new Map(items.filter((i) => i.deviceType).map((i) => [i.deviceType!.slug, i.deviceType!])).values()) {
    const row = await tx.deviceType.upsert({
      where: { slug: t.slug },
      update: {
        manufacturer: t.manufacturer,
        model: t.model,
        cpuArchitecture: t.cpuArchitecture,
        netboxId: t.netboxId,
      },
      create: t,
    });
    types.set(t.slug, row.id);
  }
  const locations = new Map<string, string>();
  for (const l of new Map(items.filter((i) => i.location).map((i) => [i.location!.slug, i.location!])).values()) {
    const row = await tx.location.upsert({
      where: { siteId_slug: { siteId, slug: l.slug } },
      update: { name: l.name, netboxId: l.netboxId },
      create: { siteId, ...l },
    });
    locations.set(l.slug, row.id);
  }
  const racks = new Map<string, string>();
  // Hundreds of racks per site: write only those that are new or changed.
  const known = new Map((await tx.rack.findMany({ where: { siteId } })).map((r) => [r.name, r]));
  for (const i of items) {
    if (!i.rack || racks.has(i.rack.name)) continue;
    const locationId = i.location ? locations.get(i.location.slug)! : null;
    const have = known.get(i.rack.name);
    if (have && have.netboxId === i.rack.netboxId && have.locationId === locationId) {
      racks.set(i.rack.name, have.id);
      continue;
    }
    const row = await tx.rack.upsert({
      where: { siteId_name: { siteId, name: i.rack.name } },
      update: { netboxId: i.rack.netboxId, locationId },
      create: { siteId, name: i.rack.name, netboxId: i.rack.netboxId, locationId },
    });
    racks.set(i.rack.name, row.id);
  }
  return { roles, types, racks };
}

export async function applyNetbox(
  tx: Db,
  ctx: Ctx,
  devices: DeviceService,
  siteId: string,
  items: NetboxItem[],
  observedAt: Date,
): Promise<ReflectionResult> {
  const result: ReflectionResult = {
    created: 0,
    updated: 0,
    unchanged: 0,
    missing: 0,
    unmatched: 0,
    unmatchedItems: [],
  };
  const refs = await upsertReferences(tx, ctx, siteId, items);
  // Narrow read of every device of the site: what matching and comparing need. Full rows (with
  // relations) are read only for the devices that change.
  const existing = (await tx.device.findMany({ where: { siteId }, select: NARROW })) as unknown as NarrowDevice[];
  const byNetboxId = new Map(existing.filter((d) => d.netboxId !== null).map((d) => [d.netboxId!, d]));
  const byName = new Map(existing.map((d) => [d.name, d]));

  const seen = new Set<string>();
  const seenNames = new Set<string>();
  const toCreate: { item: NetboxItem; data: Record<string, unknown> }[] = [];
  const toUpdate: { current: NarrowDevice; changes: Record<string, unknown>; force: boolean; interfaces?: Iface[] }[] =
    [];
  for (const item of items) {
    const fields = {
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
    const device = byNetboxId.get(item.netboxId) ?? byName.get(item.name);
    if ((device && seen.has(device.id)) || seenNames.has(item.name)) {
      // Two NetBox devices claiming one hub device (or one name): the second is reported.
      result.unmatched++;
      if (result.unmatchedItems.length < 100) result.unmatchedItems.push(item.name);
      continue;
    }
    seenNames.add(item.name);
    if (!device) {
      toCreate.push({ item, data: fields });
      continue;
    }
    seen.add(device.id);
    const current = {
      ...device,
      netboxObservedAt: observedAt,
      rackPosition: device.rackPosition === null ? null : Number(device.rackPosition),
    };
    const ifaceChanged = ifaceKey(device.interfaces) !== ifaceKey(item.interfaces);
    const fieldChanged = Object.entries(fields).some(
      ([k, v]) =>
        canonicalJson((current as unknown as Record<string, unknown>)[k] ?? null) !== canonicalJson(v ?? null),
    );
    if (!fieldChanged && !ifaceChanged) {
      result.unchanged++;
      continue;
    }
    toUpdate.push({
      current: device,
      changes: { ...fields, netboxObservedAt: observedAt },
      force: ifaceChanged,
      interfaces: ifaceChanged ? item.interfaces : undefined,
    });
  }

  // Interfaces of changed devices are replaced before the device rows are re-read, so the
  // audit record and feed event show them.
  const replaced = toUpdate.filter((u) => u.interfaces);
  if (replaced.length) {
    await tx.$executeRawUnsafe(
      `DELETE FROM device_interfaces WHERE device_id = ANY($1::uuid[])`,
      replaced.map((u) => u.current.id),
    );
    await bulkInsert(
      tx,
      "device_interfaces",
      INTERFACE_COLUMNS,
      replaced.flatMap((u) => u.interfaces!.map((i) => interfaceRow(u.current.id, i))),
    );
  }
  const missing = existing.filter((d) => !seen.has(d.id) && !d.netboxMissing && d.netboxObservedAt !== null);
  result.missing = missing.length;
  const full = new Map(
    (
      await deviceRepo.findByIds(
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
  result.updated = await devices.applyMany(
    tx,
    ctx,
    toUpdate.map((u) => ({ current: full.get(u.current.id)!, changes: u.changes as never, force: u.force })),
    "netbox",
    NETBOX_COLUMNS,
  );
  result.unchanged += toUpdate.length - result.updated;

  if (toCreate.length) {
    const now = new Date();
    const rows = toCreate.map(({ data }) => {
      const draft = {
        ...data,
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
      } as never;
      const derived = storedStatus(draft, now);
      return {
        site_id: siteId,
        ...snake(data),
        netbox_observed_at: observedAt,
        operational_status: derived.operationalStatus,
        conditions: derived.conditions,
      };
    });
    const created = await bulkInsert(
      tx,
      "devices",
      [
        { name: "site_id", type: "uuid" },
        ...NETBOX_COLUMNS.map((c) => ({ name: snakeCase(c.field), type: c.type })),
        { name: "operational_status", type: "operational_status" },
        { name: "conditions", type: "jsonb" },
      ],
      rows,
      "id, name",
    );
    const idByName = new Map((created as { id: string; name: string }[]).map((r) => [r.name, r.id]));
    await bulkInsert(
      tx,
      "device_interfaces",
      INTERFACE_COLUMNS,
      toCreate.flatMap(({ item }) => item.interfaces.map((i) => interfaceRow(idByName.get(item.name)!, i))),
    );
    const fresh = await deviceRepo.findByIds(tx, [...idByName.values()]);
    await recordChanges(
      tx,
      ctx,
      fresh.map((row) => ({
        resourceType: "device",
        resourceId: row.id,
        siteId,
        verb: "created",
        before: null,
        after: devices.present(row),
      })),
    );
    result.created = fresh.length;
  }
  await deviceRepo.markObserved(tx, "netboxObservedAt", [...seen], observedAt);
  return result;
}

const snake = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [snakeCase(k), v]));
const interfaceRow = (deviceId: string, i: Iface) => ({
  device_id: deviceId,
  name: i.name,
  type: i.type,
  mac_address: i.macAddress?.toUpperCase() ?? null,
  ib_guid: i.ibGuid,
  mgmt_only: i.mgmtOnly,
  peer_device: i.peerDevice,
  peer_interface: i.peerInterface,
  netbox_id: i.netboxId,
});
