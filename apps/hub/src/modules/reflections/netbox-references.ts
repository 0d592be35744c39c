/**
 * The roles, types, locations and racks NetBox items reference, created or brought up to date
 * before the devices that point at them. Role changes are recorded (audit, feed); types,
 * locations and racks have no events of their own.
 */
import type { NetboxItem } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { ChangeContext } from "../../lib/context.ts";
import { recordChanges, type Change } from "../changes/recorder.ts";
import { deviceRoleRepo, type DeviceRoleRow } from "../device-roles/repo.ts";
import { reflectionRepo } from "./repo.ts";

/** Ids by slug (roles, types) and by name (racks). */
export interface References {
  roles: Map<string, string>;
  types: Map<string, string>;
  racks: Map<string, string>;
}

const roleSummary = (r: DeviceRoleRow) => ({ id: r.id, slug: r.slug, name: r.name, deviceClass: r.deviceClass });

async function upsertRoles(tx: Db, ctx: ChangeContext, items: NetboxItem[]): Promise<Map<string, string>> {
  const roles = new Map<string, string>();
  const changes: Change[] = [];
  for (const r of new Map(items.map((i) => [i.role.slug, i.role])).values()) {
    const existing = await deviceRoleRepo.findRoleBySlug(tx, r.slug);
    if (!existing) {
      const row = await deviceRoleRepo.createRole(tx, r);
      changes.push({
        resourceType: "device_role",
        resourceId: row.id,
        siteId: null,
        verb: "created",
        before: null,
        after: roleSummary(row),
      });
      roles.set(r.slug, row.id);
      continue;
    }
    if (existing.name !== r.name || existing.deviceClass !== r.deviceClass || existing.netboxId !== r.netboxId) {
      const row = await deviceRoleRepo.updateRole(tx, existing.id, {
        name: r.name,
        deviceClass: r.deviceClass,
        netboxId: r.netboxId,
      });
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

/** Roles, types, locations and racks the items reference, created or updated; returns their ids. */
export async function upsertReferences(
  tx: Db,
  ctx: ChangeContext,
  siteId: string,
  items: NetboxItem[],
): Promise<References> {
  const roles = await upsertRoles(tx, ctx, items);
  const types = new Map<string, string>();
  for (const t of new Map(items.filter((i) => i.deviceType).map((i) => [i.deviceType!.slug, i.deviceType!])).values())
    types.set(t.slug, await deviceRoleRepo.upsertType(tx, t));
  const racks = await upsertRacks(tx, siteId, items);
  return { roles, types, racks };
}
