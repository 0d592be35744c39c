import { BadRequest, Conflict, NotFound, Uuid } from "@fm/domain";
import type { SiteCreate, SitePatch } from "@fm/domain";
import type { Prisma } from "../../generated/prisma/client.ts";
import type { Db } from "../../db/client.ts";
import { translateConstraintErrors } from "../../db/constraint-errors.ts";
import { lockRow } from "../../db/lock.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";
import { likeLiteral } from "../../lib/like.ts";

export type SiteRow = Prisma.SiteGetPayload<object>;
/** A site with when the hub last accepted each source's reflection (its silence is derived from that). */
export type SiteWithPushes = Prisma.SiteGetPayload<{ include: typeof WITH_PUSHES }>;
const WITH_PUSHES = {
  reflectionStates: { select: { source: true, appliedAt: true } },
} as const satisfies Prisma.SiteInclude;

export interface SiteFilter {
  slug?: string | undefined;
  region?: string | undefined;
  q?: string | undefined;
}

function where(filter: SiteFilter): Prisma.SiteWhereInput {
  const w: Prisma.SiteWhereInput = {};
  if (filter.slug) w.slug = filter.slug;
  if (filter.region) w.region = filter.region;
  if (filter.q)
    w.OR = [
      { slug: { contains: likeLiteral(filter.q), mode: "insensitive" } },
      { name: { contains: likeLiteral(filter.q), mode: "insensitive" } },
    ];
  return w;
}

/** The only place that reads or writes the sites table. */
export const siteRepo = {
  async list(db: Db, filter: SiteFilter, page: PageRequest): Promise<RowPage<SiteWithPushes>> {
    return keysetRows(
      { findMany: (args) => db.site.findMany({ ...args, include: WITH_PUSHES }), count: (args) => db.site.count(args) },
      where(filter),
      page,
    );
  },

  async findById(db: Db, id: string): Promise<SiteWithPushes | null> {
    return db.site.findUnique({ where: { id }, include: WITH_PUSHES });
  },

  /** Each site's last accepted push per source, for the silence metric: one row per (site, source). */
  async lastPushes(db: Db): Promise<{ slug: string; source: string; appliedAt: Date }[]> {
    const rows = await db.reflectionState.findMany({
      select: { source: true, appliedAt: true, site: { select: { slug: true } } },
    });
    return rows.map((r) => ({ slug: r.site.slug, source: r.source, appliedAt: r.appliedAt }));
  },

  /** Reads the row and locks it for the rest of the transaction. */
  async lockById(db: Db, id: string): Promise<SiteRow | null> {
    return (await lockRow(db, "sites", id)) ? db.site.findUnique({ where: { id } }) : null;
  },

  async create(db: Db, data: SiteCreate): Promise<SiteRow> {
    return db.site.create({ data }).catch(
      translateConstraintErrors({
        unique: new Conflict("site_slug_taken", `A site with slug '${data.slug}' already exists`),
      }),
    );
  },

  async update(db: Db, id: string, data: SitePatch): Promise<SiteWithPushes> {
    return db.site.update({
      where: { id },
      data: { ...data, version: { increment: 1 }, updatedAt: new Date() },
      include: WITH_PUSHES,
    });
  },

  async delete(db: Db, id: string): Promise<void> {
    await db.site.delete({ where: { id } }).catch(
      translateConstraintErrors({
        foreignKey: new Conflict("site_in_use", "The site still has devices, racks or locations; it cannot be deleted"),
      }),
    );
  },

  /** The ids of those of `ids` that name a site. */
  async existingIds(db: Db, ids: string[]): Promise<string[]> {
    return (await db.site.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((s) => s.id);
  },

  async findBySlugs(db: Db, slugs: string[]): Promise<{ id: string; slug: string }[]> {
    return db.site.findMany({ where: { slug: { in: slugs } }, select: { id: true, slug: true } });
  },

  /** These sites (every site: undefined) by slug, with their pushes; one statement, for a snapshot. */
  async allWithPushes(db: Db, ids: string[] | undefined): Promise<SiteWithPushes[]> {
    return db.site.findMany({ where: ids ? { id: { in: ids } } : {}, include: WITH_PUSHES, orderBy: { slug: "asc" } });
  },
};
export type SiteRepo = typeof siteRepo;

/** 404 unless the site exists (routes nested under /sites/{id}/). */
export async function requireSite(db: Db, siteId: string): Promise<SiteRow> {
  const site = await db.site.findUnique({ where: { id: siteId } });
  if (!site) throw new NotFound("site_not_found", `No site with id ${siteId}`);
  return site;
}

/** A `?site=` filter value as what it names the site by: a UUID is an id, anything else a slug. */
export const siteRef = (slugOrId: string): { id: string } | { slug: string } =>
  Uuid.safeParse(slugOrId).success ? { id: slugOrId } : { slug: slugOrId };

/** A `?site=` filter value (slug or id) to the site's id; an unknown site is a 400 naming the parameter. */
export async function resolveSiteId(db: Db, slugOrId: string, param: string): Promise<string> {
  const site = await db.site.findFirst({ where: siteRef(slugOrId), select: { id: true } });
  if (!site) throw unknownSite(slugOrId, param);
  return site.id;
}

/** Several `?site=` values (slugs or ids) to their sites' ids, in one query; an unknown one is a 400 naming it. */
export async function resolveSiteIds(db: Db, slugsOrIds: readonly string[], param: string): Promise<string[]> {
  const ids = slugsOrIds.filter((v) => Uuid.safeParse(v).success);
  const slugs = slugsOrIds.filter((v) => !Uuid.safeParse(v).success);
  const found = await db.site.findMany({
    where: { OR: [{ id: { in: ids } }, { slug: { in: slugs } }] },
    select: { id: true, slug: true },
  });
  const missing = slugsOrIds.find((v) => !found.some((s) => s.id === v || s.slug === v));
  if (missing !== undefined) throw unknownSite(missing, param);
  return [...new Set(found.map((s) => s.id))];
}

/** The 400 of a query parameter `param` naming no site (by slug or id). */
export const unknownSite = (slugOrId: string, param: string) =>
  new BadRequest("unknown_site", `No site '${slugOrId}'`, {
    errors: [{ path: `querystring.${param}`, message: "unknown site" }],
  });
