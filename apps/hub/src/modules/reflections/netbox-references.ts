/**
 * The roles, types, locations and racks NetBox items reference, created or brought up to date
 * before the devices that point at them.
 *
 * Roles and types are fleet-wide rows: every site's NetBox agent pushes them. Who owns what:
 * - The hub owns what routes devices: a role's device class (the hub's role mapping,
 *   FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING; for a slug it does not map, the class the role was
 *   created with) and a type's CPU architecture (set when the type is created). A push that
 *   disagrees is reported in the push's answer and logged, never applied.
 * - NetBox owns the descriptive fields (a role's name, a type's manufacturer and model, NetBox
 *   ids), which follow the pushes.
 * Every change to these rows is audited and in the feed. Two pushes introducing the same new
 * row at once both succeed: the insert is ON CONFLICT DO NOTHING, and the loser reads the
 * winner's row.
 */
import type { DeviceClass, DeviceType, NetboxItem, SharedRowConflict } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { ChangeContext } from "../../lib/context.ts";
import { recordChanges, type Change } from "../../changes/recorder.ts";
import { deviceRoleRows, type DeviceRoleRow, type DeviceTypeRow } from "../device-roles/public.ts";
import { reflectionRepo } from "./repo.ts";

/** Ids by slug (roles, types) and by name (racks), and what the push disagreed with. */
export interface References {
  roles: Map<string, string>;
  types: Map<string, string>;
  racks: Map<string, string>;
  conflicts: SharedRowConflict[];
}

/** The hub's role mapping: NetBox role slug -> device class. */
export type RoleClassMapping = Readonly<Record<string, DeviceClass>>;

const roleSummary = (r: DeviceRoleRow) => ({ id: r.id, slug: r.slug, name: r.name, deviceClass: r.deviceClass });
const typeSummary = (t: DeviceTypeRow): DeviceType => ({
  id: t.id,
  slug: t.slug,
  manufacturer: t.manufacturer,
  model: t.model,
  cpuArchitecture: t.cpuArchitecture,
  netboxId: t.netboxId,
});

async function upsertRoles(
  tx: Db,
  ctx: ChangeContext,
  items: NetboxItem[],
  mapping: RoleClassMapping,
  conflicts: SharedRowConflict[],
): Promise<Map<string, string>> {
  const roles = new Map<string, string>();
  const changes: Change[] = [];
  for (const r of new Map(items.map((i) => [i.role.slug, i.role])).values()) {
    const hubClass = mapping[r.slug];
    const created = await deviceRoleRows.createRoleIfAbsent(tx, { ...r, deviceClass: hubClass ?? r.deviceClass });
    if (created) {
      changes.push({
        resourceType: "device_role",
        resourceId: created.id,
        siteId: null,
        verb: "created",
        before: null,
        after: roleSummary(created),
      });
      roles.set(r.slug, created.id);
      if (hubClass && hubClass !== r.deviceClass)
        conflicts.push({
          resource: "device_role",
          slug: r.slug,
          field: "deviceClass",
          hub: hubClass,
          pushed: r.deviceClass,
        });
      continue;
    }
    const existing = (await deviceRoleRows.findRoleBySlug(tx, r.slug))!;
    const deviceClass = hubClass ?? existing.deviceClass;
    if (r.deviceClass !== deviceClass)
      conflicts.push({
        resource: "device_role",
        slug: r.slug,
        field: "deviceClass",
        hub: deviceClass,
        pushed: r.deviceClass,
      });
    if (existing.name !== r.name || existing.deviceClass !== deviceClass || existing.netboxId !== r.netboxId) {
      const row = await deviceRoleRows.updateRole(tx, existing.id, { name: r.name, deviceClass, netboxId: r.netboxId });
      changes.push({
        resourceType: "device_role",
        resourceId: row.id,
        siteId: null,
        verb: "updated",
        before: roleSummary(existing),
        after: roleSummary(row),
      });
    }
    roles.set(r.slug, existing.id);
  }
  await recordChanges(tx, ctx, changes);
  return roles;
}

async function upsertTypes(
  tx: Db,
  ctx: ChangeContext,
  items: NetboxItem[],
  conflicts: SharedRowConflict[],
): Promise<Map<string, string>> {
  const types = new Map<string, string>();
  const changes: Change[] = [];
  for (const t of new Map(items.filter((i) => i.deviceType).map((i) => [i.deviceType!.slug, i.deviceType!])).values()) {
    const created = await deviceRoleRows.createTypeIfAbsent(tx, t);
    if (created) {
      changes.push({
        resourceType: "device_type",
        resourceId: created.id,
        siteId: null,
        verb: "created",
        before: null,
        after: typeSummary(created),
      });
      types.set(t.slug, created.id);
      continue;
    }
    const existing = (await deviceRoleRows.findTypeBySlug(tx, t.slug))!;
    if (existing.cpuArchitecture !== t.cpuArchitecture)
      conflicts.push({
        resource: "device_type",
        slug: t.slug,
        field: "cpuArchitecture",
        hub: existing.cpuArchitecture,
        pushed: t.cpuArchitecture,
      });
    if (existing.manufacturer !== t.manufacturer || existing.model !== t.model || existing.netboxId !== t.netboxId) {
      const row = await deviceRoleRows.updateType(tx, existing.id, {
        manufacturer: t.manufacturer,
        model: t.model,
        netboxId: t.netboxId,
      });
      changes.push({
        resourceType: "device_type",
        resourceId: row.id,
        siteId: null,
        verb: "updated",
        before: typeSummary(existing),
        after: typeSummary(row),
      });
    }
    types.set(t.slug, existing.id);
  }
  await recordChanges(tx, ctx, changes);
  return types;
}

async function upsertRacks(tx: Db, siteId: string, items: NetboxItem[]): Promise<Map<string, string>> {
  const locations = new Map<string, string>();
  for (const l of new Map(items.filter((i) => i.location).map((i) => [i.location!.slug, i.location!])).values())
    locations.set(l.slug, await reflectionRepo.upsertLocation(tx, siteId, l));
  const racks = new Map<string, string>();
  // Hundreds of racks per site: write only those that are new or changed.
  const known = new Map((await reflectionRepo.racks(tx, siteId)).map((r) => [r.name, r]));
  for (const i of items) {
    if (!i.rack || racks.has(i.rack.name)) continue;
    const locationId = i.location ? locations.get(i.location.slug)! : null;
    const have = known.get(i.rack.name);
    const unchanged = have && have.netboxId === i.rack.netboxId && have.locationId === locationId;
    racks.set(i.rack.name, unchanged ? have.id : await reflectionRepo.upsertRack(tx, siteId, i.rack, locationId));
  }
  return racks;
}

/** Roles, types, locations and racks the items reference, created or updated; returns their ids and the conflicts. */
export async function upsertReferences(
  tx: Db,
  ctx: ChangeContext,
  siteId: string,
  items: NetboxItem[],
  mapping: RoleClassMapping,
): Promise<References> {
  const conflicts: SharedRowConflict[] = [];
  const roles = await upsertRoles(tx, ctx, items, mapping, conflicts);
  const types = await upsertTypes(tx, ctx, items, conflicts);
  const racks = await upsertRacks(tx, siteId, items);
  return { roles, types, racks, conflicts };
}
