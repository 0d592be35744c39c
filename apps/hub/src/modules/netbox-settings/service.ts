/**
 * The NetBox settings (which clusters each site's netbox agent ingests, and the role -> device
 * class mapping), held by the hub: from its configuration at start (FM_NETBOX_DEVICE_FILTERS,
 * FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING, applied when they differ from the configuration last
 * applied) and through the admin API. Every change is audited and in the feed. A change of the
 * mapping re-classes the roles it names at once (audited, feed), since the hub owns a role's
 * device class. A site the settings name that the hub has no Site for is created with the change
 * (slug; its name is the slug until the site's netbox agent pushes NetBox's name and ids), so the
 * site's agents and an FM_EXPECTED_SATELLITES satellite naming it can start.
 */
import { reconcileSitesOfRoles } from "../discrepancies/public.ts";
import {
  NetboxSettingsSchema,
  sameJson,
  type DeviceClass,
  type NetboxDeviceFilter,
  type NetboxSettings,
  type NetboxSettingsInput,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { ChangeContext } from "../../lib/context.ts";
import { recordChanges, type Change } from "../../changes/recorder.ts";
import { deviceRoleRows } from "../device-roles/public.ts";
import { siteRows } from "../sites/public.ts";
import { siteFields } from "../sites/public.ts";
import type { NetboxSettingsRepo, NetboxSettingsRow } from "./repo.ts";

export function toNetboxSettings(
  row: Pick<NetboxSettingsRow, "deviceFilters" | "deviceRoleClassMapping" | "version" | "updatedAt"> | null,
): NetboxSettings {
  return NetboxSettingsSchema.parse({
    deviceFilters: row?.deviceFilters ?? [],
    deviceRoleClassMapping: row?.deviceRoleClassMapping ?? {},
    version: row?.version ?? 0,
    updatedAt: (row?.updatedAt ?? new Date(0)).toISOString(),
  });
}

/** The hub's role mapping, as reflections apply it. */
export async function roleClassMapping(db: Db, repo: NetboxSettingsRepo): Promise<Record<string, DeviceClass>> {
  return toNetboxSettings(await repo.get(db)).deviceRoleClassMapping;
}

/** A Site for each site the filters name that the hub does not have (slug; named by NetBox later). */
async function createListedSites(tx: Db, filters: NetboxDeviceFilter[]): Promise<Change[]> {
  const slugs = filters.map((f) => f.site);
  const have = new Set((await siteRows.findBySlugs(tx, slugs)).map((s) => s.slug));
  const changes: Change[] = [];
  for (const slug of slugs.filter((s) => !have.has(s))) {
    const site = siteFields(await siteRows.create(tx, { slug, name: slug }));
    changes.push({
      resourceType: "site",
      resourceId: site.id,
      siteId: site.id,
      verb: "created",
      before: null,
      after: site,
    });
  }
  return changes;
}

export function createNetboxSettingsService({ prisma, repo }: { prisma: PrismaClient; repo: NetboxSettingsRepo }) {
  async function write(
    ctx: ChangeContext,
    input: NetboxSettingsInput,
    configured?: NetboxSettingsInput,
  ): Promise<NetboxSettings> {
    return prisma.$transaction(async (tx) => {
      const current = await repo.lock(tx);
      const before = toNetboxSettings(current);
      const same =
        sameJson(before.deviceFilters, input.deviceFilters) &&
        sameJson(before.deviceRoleClassMapping, input.deviceRoleClassMapping);
      const sites = await createListedSites(tx, input.deviceFilters);
      if (same && !configured) {
        await recordChanges(tx, ctx, sites);
        return before;
      }
      const row = await repo.save(tx, input, same ? current.version : current.version + 1, configured);
      const after = toNetboxSettings(row);
      const changes: Change[] = [...sites];
      if (!same)
        changes.push({
          resourceType: "netbox_settings",
          resourceId: "netbox",
          siteId: null,
          verb: "updated",
          before,
          after,
        });
      const reclassed: string[] = [];
      for (const [slug, deviceClass] of Object.entries(input.deviceRoleClassMapping)) {
        const role = await deviceRoleRows.findRoleBySlug(tx, slug);
        if (!role || role.deviceClass === deviceClass) continue;
        const updated = await deviceRoleRows.updateRole(tx, role.id, {
          name: role.name,
          deviceClass,
          netboxId: role.netboxId,
        });
        reclassed.push(role.id);
        const summary = (r: typeof role) => ({ id: r.id, slug: r.slug, name: r.name, deviceClass: r.deviceClass });
        changes.push({
          resourceType: "device_role",
          resourceId: role.id,
          siteId: null,
          verb: "updated",
          before: summary(role),
          after: summary(updated),
        });
      }
      await recordChanges(tx, ctx, changes);
      await reconcileSitesOfRoles(tx, reclassed, new Date());
      return after;
    });
  }

  return {
    async get(): Promise<NetboxSettings> {
      return toNetboxSettings(await repo.get(prisma));
    },

    /** Replaces the settings (admin API). */
    async put(ctx: ChangeContext, input: NetboxSettingsInput): Promise<NetboxSettings> {
      return write(ctx, input);
    },

    /**
     * At start: the configuration's settings, when they differ from the configuration last
     * applied; else the sites the current settings name are created when missing.
     */
    async applyConfigured(ctx: ChangeContext, configured: NetboxSettingsInput): Promise<boolean> {
      const row = await repo.get(prisma);
      if (row?.configured && sameJson(row.configured, configured)) {
        await prisma.$transaction(async (tx) => {
          const current = toNetboxSettings(await repo.lock(tx));
          await recordChanges(tx, ctx, await createListedSites(tx, current.deviceFilters));
        });
        return false;
      }
      await write(ctx, configured, configured);
      return true;
    },
  };
}
export type NetboxSettingsService = ReturnType<typeof createNetboxSettingsService>;
