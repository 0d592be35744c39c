/**
 * The only place that reads or writes the discrepancies table. The `unobserved` kind is not
 * kept: it is derived here, in SQL, from the devices' observed-at columns and the clock, and
 * joined to the kept rows so one keyset query pages over both (ids are UUIDs either way: a
 * kept row's own, or the device's for `unobserved`).
 */
import { DISCREPANCY_DEVICE_FIELDS, type DiscrepancyKind } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";
import { isObservedField, type DeviceBase } from "../../db/device-columns.ts";
import { snakeCase } from "../../db/bulk.ts";
import type { PageRequest, RowPage } from "../../db/keyset.ts";
import { containing } from "../../lib/like.ts";

/**
 * What the device kinds read of every device of a site, with its role's device class. One plain
 * statement: this runs in every reflection's transaction over the whole site, and the ORM's
 * hydration of a site's rows (and its second query for the roles) cost more than the query.
 */
const DEVICE_COLUMNS = ["id", "name", ...DISCREPANCY_DEVICE_FIELDS] as const;
const DEVICES_SQL = `SELECT ${DEVICE_COLUMNS.map((f) => `${isObservedField(f) ? "o" : "d"}.${snakeCase(f)}${f === "netboxStatus" ? "::text" : ""} AS "${f}"`).join(", ")},
       r.device_class::text AS "deviceClass"
  FROM devices d LEFT JOIN device_observations o ON o.device_id = d.id LEFT JOIN device_roles r ON r.id = d.device_role_id
 WHERE d.site_id = $1::uuid`;
export type DiscrepancyDeviceRow = Pick<DeviceBase, (typeof DEVICE_COLUMNS)[number]> & { deviceClass: string | null };

export interface OpenRow {
  id: string;
  kind: string;
  subject: string;
  observed: unknown;
}

export interface KeptDiscrepancy {
  kind: string;
  subject: string;
  deviceId: string | null;
  name: string;
  observed: Record<string, string | null>;
}

/** A row of the report: kept, or derived (`unobserved`, with `lastSeenAt`). */
export interface ReportRow {
  id: string;
  siteId: string;
  kind: string;
  deviceId: string | null;
  name: string;
  observed: Record<string, string | null> | null;
  since: Date;
  lastSeenAt: Date | null;
}

/** The last time any source observed the device (never observed: when the hub created it). */
const LAST_SEEN = Prisma.sql`COALESCE(GREATEST(o.netbox_observed_at, o.ironic_observed_at, o.slurm_observed_at, o.health_observed_at), d.created_at)`;

/** Which rows of the report: these sites (all: undefined), these kinds, a name containing this text. */
export interface ReportFilter {
  siteIds?: readonly string[] | undefined;
  kinds?: readonly DiscrepancyKind[] | undefined;
  name?: string | undefined;
}

function reportSql(siteIds: readonly string[] | undefined, now: Date, staleAfterMs: number): Prisma.Sql {
  const window = Prisma.sql`make_interval(secs => ${staleAfterMs / 1000})`;
  const siteOf = (column: Prisma.Sql) =>
    siteIds === undefined ? Prisma.sql`TRUE` : Prisma.sql`${column} = ANY(${[...siteIds]}::uuid[])`;
  return Prisma.sql`
    SELECT id, site_id, kind, device_id, name, observed, first_seen_at AS since, NULL::timestamptz AS last_seen_at
      FROM discrepancies x WHERE ${siteOf(Prisma.sql`x.site_id`)}
    UNION ALL
    SELECT d.id, d.site_id, 'unobserved', d.id, d.name, NULL::jsonb, ${LAST_SEEN} + ${window}, ${LAST_SEEN}
      FROM devices d LEFT JOIN device_observations o ON o.device_id = d.id
     WHERE ${siteOf(Prisma.sql`d.site_id`)} AND ${LAST_SEEN} < ${now}::timestamptz - ${window}`;
}

/** The report's rows a filter keeps (the sites are already narrowed by reportSql). */
function filterSql(filter: ReportFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (filter.kinds?.length) parts.push(Prisma.sql`kind = ANY(${[...filter.kinds]}::text[])`);
  if (filter.name) parts.push(Prisma.sql`name ILIKE ${containing(filter.name)}`);
  return parts.length ? Prisma.join(parts, " AND ") : Prisma.sql`TRUE`;
}

export const discrepancyRepo = {
  /** Serialises rewrites of one site's discrepancies until the caller commits. */
  async lockSite(db: Db, siteId: string): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('discrepancies'), hashtext(${siteId}))`;
  },

  /** The site's devices, or only those of `ids` among them. */
  async devices(db: Db, siteId: string, ids?: readonly string[]): Promise<DiscrepancyDeviceRow[]> {
    if (ids)
      return db.$queryRawUnsafe<DiscrepancyDeviceRow[]>(`${DEVICES_SQL} AND d.id = ANY($2::uuid[])`, siteId, ids);
    return db.$queryRawUnsafe<DiscrepancyDeviceRow[]>(DEVICES_SQL, siteId);
  },

  /** The sites that have devices of any of these roles. */
  async sitesWithRoles(db: Db, roleIds: readonly string[]): Promise<string[]> {
    const rows = await db.$queryRaw<{ site_id: string }[]>`
      SELECT DISTINCT site_id::text FROM devices WHERE device_role_id = ANY(${[...roleIds]}::uuid[]) ORDER BY 1`;
    return rows.map((r) => r.site_id);
  },

  /** True once the hub has accepted an Ironic reflection for the site. */
  async ironicReports(db: Db, siteId: string): Promise<boolean> {
    const n = await db.reflectionState.count({
      where: { siteId, source: { startsWith: "ironic-" }, observedAt: { gt: new Date(0) } },
    });
    return n > 0;
  },

  async open(db: Db, siteId: string): Promise<OpenRow[]> {
    return db.discrepancy.findMany({
      where: { siteId },
      select: { id: true, kind: true, subject: true, observed: true },
    });
  },

  async insert(db: Db, siteId: string, rows: KeptDiscrepancy[], firstSeenAt: Date): Promise<void> {
    if (!rows.length) return;
    await db.discrepancy.createMany({ data: rows.map((r) => ({ ...r, siteId, firstSeenAt })), skipDuplicates: true });
  },

  async updateObserved(db: Db, id: string, observed: Record<string, string | null>): Promise<void> {
    await db.discrepancy.update({ where: { id }, data: { observed } });
  },

  async remove(db: Db, ids: string[]): Promise<void> {
    if (ids.length) await db.discrepancy.deleteMany({ where: { id: { in: ids } } });
  },

  /** One page of the report (kept and derived rows) in id order, and its exact count. */
  async page(
    db: Db,
    filter: ReportFilter,
    now: Date,
    staleAfterMs: number,
    page: PageRequest,
  ): Promise<RowPage<ReportRow>> {
    const report = reportSql(filter.siteIds, now, staleAfterMs);
    const kept = filterSql(filter);
    const after = page.afterId ? Prisma.sql`id > ${page.afterId}::uuid` : Prisma.sql`TRUE`;
    const [rows, counted] = await Promise.all([
      db.$queryRaw<Record<string, unknown>[]>`
        SELECT * FROM (${report}) r WHERE ${kept} AND ${after} ORDER BY id LIMIT ${page.limit + 1}`,
      db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM (${report}) r WHERE ${kept}`,
    ]);
    return {
      rows: rows.map((r) => ({
        id: r.id as string,
        siteId: r.site_id as string,
        kind: r.kind as string,
        deviceId: r.device_id as string | null,
        name: r.name as string,
        observed: r.observed as Record<string, string | null> | null,
        since: r.since as Date,
        lastSeenAt: r.last_seen_at as Date | null,
      })),
      count: Number(counted[0]?.n ?? 0),
    };
  },

  /** Open discrepancies per site and kind, fleet-wide (kept and derived). */
  async counts(
    db: Db,
    now: Date,
    staleAfterMs: number,
  ): Promise<{ siteId: string; slug: string; kind: string; n: number }[]> {
    const rows = await db.$queryRaw<{ site_id: string; slug: string; kind: string; n: bigint }[]>`
      SELECT r.site_id, s.slug, r.kind, count(*) AS n
        FROM (${reportSql(undefined, now, staleAfterMs)}) r JOIN sites s ON s.id = r.site_id
       GROUP BY r.site_id, s.slug, r.kind ORDER BY s.slug, r.kind`;
    return rows.map((r) => ({ siteId: r.site_id, slug: r.slug, kind: r.kind, n: Number(r.n) }));
  },
};
export type DiscrepancyRepo = typeof discrepancyRepo;
