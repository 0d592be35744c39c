/**
 * The read-optimised device list: filters as Prisma where-clauses, and pages whose
 * representation PostgreSQL writes as JSON text (JSON_COLUMNS), or the brief columns, with their
 * counts (exact, or site_device_counts' for a whole site) and grouped counts.
 */
import type pg from "pg";
import type { DeviceBurnInFilter, DeviceListQuery, OperationalStatus } from "@fm/domain";
import { pooledRead, type Db } from "../../../db/client.ts";
import type { Prisma } from "../../../generated/prisma/client.ts";
import { orderedKeysetRows, type OrderedPage, type RowPage } from "../../../db/keyset.ts";
import { likeLiteral } from "../../../lib/like.ts";
import { OBSERVED_FIELDS, type DeviceBase, type Observed } from "../../../db/device-columns.ts";
import type { ObservedColumns } from "../state.ts";
import { OBSERVED_JOIN, withObservations } from "./observations.ts";

/** What the brief representation shows, and the observed-at times its staleness needs. */
const BRIEF_SELECT = {
  id: true,
  name: true,
  site: { select: { id: true, slug: true } },
  netboxStatus: true,
  ironicProvisionState: true,
  operationalStatus: true,
  cordoned: true,
  cordonReason: true,
  cordonedBy: true,
  cordonedAt: true,
  burnInStatus: true,
  burnInJobId: true,
  burnInAt: true,
  ironicLastError: true,
  ironicFault: true,
  serial: true,
  updatedAt: true,
  observations: true,
} satisfies Prisma.DeviceSelect;
export type DeviceBriefRow = Omit<Prisma.DeviceGetPayload<{ select: typeof BRIEF_SELECT }>, "observations"> & Observed;

/** Any source that has observed the device did so before `threshold`. */
export function staleWhere(threshold: Date): Prisma.DeviceWhereInput {
  return { observations: { is: { OR: OBSERVED_FIELDS.map((f) => ({ [f]: { lt: threshold } })) } } };
}

/** The negation of staleWhere, spelled out: SQL's NOT over NULL comparisons would drop rows. */
export function freshWhere(threshold: Date): Prisma.DeviceWhereInput {
  return {
    observations: { is: { AND: OBSERVED_FIELDS.map((f) => ({ OR: [{ [f]: null }, { [f]: { gte: threshold } }] })) } },
  };
}

export interface DeviceFilter extends Omit<DeviceListQuery, "limit" | "cursor" | "site" | "sort"> {
  siteId?: string | undefined;
}

/** Query keys that do not narrow which devices a list holds. */
const NOT_FILTERS = new Set(["siteId", "site", "limit", "cursor", "page", "brief", "sort"]);

/**
 * The scope whose count `site_device_counts` holds (a site, or the fleet), when the filter is
 * nothing more than that; undefined when rows must be counted.
 */
export function wholeSiteOf(f: DeviceFilter): { siteId: string | undefined } | undefined {
  const narrowed = Object.entries(f).some(([k, v]) => v !== undefined && !NOT_FILTERS.has(k));
  return narrowed ? undefined : { siteId: f.siteId };
}

/**
 * Filters as SQL. `operationalStatus` matches what readers see: the stored (time-independent)
 * status, except that a stale device reads as STALE unless an operator quarantined it.
 */
export function deviceWhere(f: DeviceFilter, staleThreshold: Date): Prisma.DeviceWhereInput {
  const and: Prisma.DeviceWhereInput[] = [];
  if (f.siteId) and.push({ siteId: f.siteId });
  if (f.role) and.push({ deviceRole: { slug: f.role } });
  if (f.deviceClass) and.push({ deviceRole: { deviceClass: { in: f.deviceClass } } });
  if (f.status) and.push({ netboxStatus: { in: f.status } });
  if (f.provisionState) and.push({ ironicProvisionState: f.provisionState });
  if (f.cordoned !== undefined) and.push({ cordoned: f.cordoned });
  if (f.name) and.push({ name: { contains: likeLiteral(f.name), mode: "insensitive" } });
  if (f.nameExact) and.push({ name: f.nameExact });
  if (f.serial) and.push({ serial: f.serial });
  if (f.tag) and.push({ tags: { has: f.tag } });
  if (f.burnIn) and.push(anyOf(f.burnIn.map((b) => ({ burnInStatus: BURN_IN_STATUS[b] }))));
  if (f.updatedSince) and.push({ updatedAt: { gte: new Date(f.updatedSince) } });
  const stale = staleWhere(staleThreshold);
  const fresh = freshWhere(staleThreshold);
  if (f.stale === true) and.push(stale);
  if (f.stale === false) and.push(fresh);
  if (f.operationalStatus)
    and.push(
      anyOf(
        f.operationalStatus.map((status): Prisma.DeviceWhereInput =>
          status === "STALE"
            ? { AND: [stale, { NOT: { operationalStatus: "QUARANTINED" } }] }
            : status === "QUARANTINED"
              ? { operationalStatus: "QUARANTINED" }
              : { AND: [{ operationalStatus: status }, fresh] },
        ),
      ),
    );
  return and.length ? { AND: and } : {};
}
/** The stored burn-in status each value of the burn-in filter matches (none: never burnt in). */
const BURN_IN_STATUS = { passed: "PASSED", failed: "FAILED", none: null } as const satisfies Record<
  DeviceBurnInFilter,
  string | null
>;
/** One condition as it is, several as an OR (so a single value plans as it always did). */
const anyOf = (conditions: Prisma.DeviceWhereInput[]): Prisma.DeviceWhereInput =>
  conditions.length === 1 ? conditions[0]! : { OR: conditions };

/** SQL: a timestamptz as toISOString() writes it (the columns hold milliseconds). */
const isoText = (e: string) => `to_char(${e} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/**
 * SQL: a JSON object of these members (name: SQL expression) as compact text, as
 * JSON.stringify writes it (row_to_json is compact; json_build_object is not).
 */
const jsonObject = (members: Record<string, string>) =>
  `(SELECT row_to_json(o) FROM (SELECT ${Object.entries(members)
    .map(([k, e]) => `${e} AS "${k}"`)
    .join(", ")}) o)`;

/**
 * The device list's rows with their representation (toDevice's) as JSON text written by
 * PostgreSQL, in three objects around what the hub writes (toDeviceJson): `head` from id to
 * slurm, `mid` from cordoned to burnIn, `tail` from version to updatedAt. The hub writes the
 * health (its checks are jsonb, whose text is not compact) and what depends on its clock
 * (operationalStatus, conditions, stale) between them. The other columns are what that
 * derivation reads, and the sort values of the next page's cursor. The bytes equal
 * JSON.stringify(toDevice(row)) (a test holds the two together): a page costs no object per
 * field and no re-serialisation.
 */
const JSON_COLUMNS = `d.id, d.name, d.serial, d.operational_status AS "operationalStatus", d.updated_at AS "updatedAt",
         d.netbox_status AS "netboxStatus", d.netbox_missing AS "netboxMissing", o.netbox_observed_at AS "netboxObservedAt",
         d.ironic_provision_state AS "ironicProvisionState", d.ironic_target_provision_state AS "ironicTargetProvisionState",
         d.ironic_power_state AS "ironicPowerState", d.ironic_maintenance AS "ironicMaintenance",
         d.ironic_maintenance_reason AS "ironicMaintenanceReason", d.ironic_last_error AS "ironicLastError",
         d.ironic_fault AS "ironicFault", o.ironic_observed_at AS "ironicObservedAt",
         d.slurm_state AS "slurmState", d.slurm_state_flags AS "slurmStateFlags", d.slurm_reason AS "slurmReason",
         o.slurm_observed_at AS "slurmObservedAt", d.health_status AS "healthStatus",
         d.health_conditions AS "healthConditions", o.health_observed_at AS "healthObservedAt",
         d.cordoned, d.cordon_reason AS "cordonReason", d.conditions,
         ${jsonObject({
           id: "d.id",
           name: "d.name",
           site: jsonObject({ id: "s.id", slug: "s.slug" }),
           serial: "d.serial",
           assetTag: "d.asset_tag",
           rack: `CASE WHEN r.id IS NOT NULL THEN ${jsonObject({ id: "r.id", name: "r.name", position: "d.rack_position::float8" })} END`,
           deviceType: `CASE WHEN t.id IS NOT NULL THEN ${jsonObject({ id: "t.id", slug: "t.slug", model: "t.model", cpuArchitecture: "t.cpu_architecture" })} END`,
           role: `CASE WHEN ro.id IS NOT NULL THEN ${jsonObject({ id: "ro.id", slug: "ro.slug", deviceClass: "ro.device_class" })} END`,
           platformClass: "d.platform_class",
           tags: "d.tags",
           bmcAddress: "d.bmc_address",
           interfaces: `('[' || coalesce((SELECT string_agg(${jsonObject({
             name: "i.name",
             type: "i.type",
             macAddress: "i.mac_address",
             ibGuid: "i.ib_guid",
             mgmtOnly: "i.mgmt_only",
             peerDevice: "i.peer_device",
             peerInterface: "i.peer_interface",
           })}::text, ',' ORDER BY i.name) FROM device_interfaces i WHERE i.device_id = d.id), '') || ']')::json`,
           netbox: jsonObject({
             id: "d.netbox_id",
             status: "d.netbox_status",
             missing: "d.netbox_missing",
             observedAt: isoText("o.netbox_observed_at"),
           }),
           ironic: jsonObject({
             instance: "d.ironic_instance",
             nodeUuid: "d.ironic_node_uuid",
             provisionState: "d.ironic_provision_state",
             targetProvisionState: "d.ironic_target_provision_state",
             powerState: "d.ironic_power_state",
             maintenance: "d.ironic_maintenance",
             maintenanceReason: "d.ironic_maintenance_reason",
             lastError: "d.ironic_last_error",
             fault: "d.ironic_fault",
             observedAt: isoText("o.ironic_observed_at"),
           }),
           slurm: jsonObject({
             nodeName: "d.slurm_node_name",
             state: "d.slurm_state",
             stateFlags: "d.slurm_state_flags",
             reason: "d.slurm_reason",
             partitions: "d.slurm_partitions",
             observedAt: isoText("o.slurm_observed_at"),
           }),
         })}::text AS head,
         ${jsonObject({
           cordoned: "d.cordoned",
           cordonReason: "d.cordon_reason",
           cordonedBy: "d.cordoned_by",
           cordonedAt: isoText("d.cordoned_at"),
           // A cordon without a recorded source is an operator's (as toDevice reads it).
           cordonSource: "CASE WHEN d.cordoned THEN coalesce(d.cordon_source, 'operator') END",
           notes: "d.notes",
           burnIn: `CASE WHEN d.burn_in_status <> '' AND d.burn_in_job_id IS NOT NULL AND d.burn_in_at IS NOT NULL
                         THEN ${jsonObject({ status: "d.burn_in_status", jobId: "d.burn_in_job_id", at: isoText("d.burn_in_at") })} END`,
         })}::text AS mid,
         ${jsonObject({ version: "d.version", createdAt: isoText("d.created_at"), updatedAt: isoText("d.updated_at") })}::text AS tail`;
/** The brief representation's columns (BRIEF_SELECT's) for a page read in one statement. */
const BRIEF_COLUMNS = `d.id, d.name, json_build_object('id', s.id, 'slug', s.slug) AS site, d.serial,
         d.netbox_status AS "netboxStatus", d.ironic_provision_state AS "ironicProvisionState",
         d.operational_status AS "operationalStatus", d.cordoned, d.updated_at AS "updatedAt",
         d.cordon_reason AS "cordonReason", d.cordoned_by AS "cordonedBy", d.cordoned_at AS "cordonedAt",
         d.burn_in_status AS "burnInStatus", d.burn_in_job_id AS "burnInJobId", d.burn_in_at AS "burnInAt",
         d.ironic_last_error AS "ironicLastError", d.ironic_fault AS "ironicFault",
         o.netbox_observed_at AS "netboxObservedAt", o.ironic_observed_at AS "ironicObservedAt",
         o.slurm_observed_at AS "slurmObservedAt", o.health_observed_at AS "healthObservedAt"`;
const COLUMNS = { json: JSON_COLUMNS, brief: BRIEF_COLUMNS };
/**
 * `columns` of the devices whose ids `ids` (SQL: a relation `p` with an `id` column) holds (the
 * joins a representation does not read, PostgreSQL leaves out).
 */
const rowsOf = (columns: keyof typeof COLUMNS, ids: string) => `
  SELECT ${COLUMNS[columns]}
    FROM ${ids} JOIN devices d ON d.id = p.id JOIN sites s ON s.id = d.site_id
    ${OBSERVED_JOIN}
    LEFT JOIN racks r ON r.id = d.rack_id
    LEFT JOIN device_types t ON t.id = d.device_type_id
    LEFT JOIN device_roles ro ON ro.id = d.device_role_id`;
const JSON_ROWS = rowsOf("json", "unnest($1::uuid[]) AS p(id)");

/**
 * A page of a whole site's devices (or the fleet's) in id order, in one statement: the site
 * (slug or id), the count site_device_counts keeps, and the page's rows (JSON_COLUMNS, or
 * BRIEF_COLUMNS). One row with a null id when the page is empty; none when the site is unknown.
 * Built per case (site or fleet, first page or after a cursor) so that each is planned with
 * the (site_id, id) index or the primary key, never an OR over parameters.
 */
function idOrderPageSql(columns: keyof typeof COLUMNS, site: "slug" | "id" | undefined, after: boolean): string {
  let n = 0;
  const siteParam = site ? `$${++n}` : "";
  const afterParam = after ? `$${++n}::uuid` : "";
  const limitParam = `$${++n}`;
  const where = [...(site ? ["d.site_id = m.site_id"] : []), ...(after ? [`d.id > ${afterParam}`] : [])];
  const meta = site
    ? `SELECT s.id AS site_id,
              coalesce((SELECT c.devices FROM site_device_counts c WHERE c.site_id = s.id), 0)::int AS count
         FROM sites s WHERE ${site === "id" ? `s.id = ${siteParam}::uuid` : `s.slug = ${siteParam}`}`
    : `SELECT NULL::uuid AS site_id, coalesce((SELECT sum(c.devices) FROM site_device_counts c), 0)::int AS count`;
  return `
  SELECT m.site_id AS "siteId", m.count, x.*
    FROM (${meta}) m
    LEFT JOIN LATERAL (${rowsOf(
      columns,
      `(SELECT d.id FROM devices d ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY d.id LIMIT ${limitParam}) p`,
    )}
     ) x ON true
   ORDER BY x.id`;
}

/** A row of JSON_ROWS: the representation's text pieces and what the read-time derivation needs. */
export type DeviceJsonRow = ObservedColumns &
  Pick<DeviceBase, "id" | "name" | "serial" | "operationalStatus" | "updatedAt"> & {
    head: string;
    mid: string;
    tail: string;
  };

/** JSON_ROWS of these devices in the order of `ids`. */
async function jsonRowsInOrder(db: Db, pool: pg.Pool | undefined, ids: string[]): Promise<DeviceJsonRow[]> {
  if (!ids.length) return [];
  const rows = await pooledRead<DeviceJsonRow>(db, pool, "devices-json-rows", JSON_ROWS, [ids]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A page of the device list: its order, and the rows after the cursor in that order. */
export type DevicePage = OrderedPage<Prisma.DeviceWhereInput, Prisma.DeviceOrderByWithRelationInput[]> & {
  /** Rows of the order to pass over first (page=N); 0 or absent for a cursor's page. */
  skip?: number;
};

export const deviceList = {
  /**
   * A page of devices, each as JSON_ROWS reads it (the representation's text, built by
   * PostgreSQL), and the exact count of those matching. `wholeSite` (see wholeSiteOf): the
   * count is read from site_device_counts instead of counting the site's rows.
   */
  async listJson(
    db: Db,
    pool: pg.Pool | undefined,
    where: Prisma.DeviceWhereInput,
    page: DevicePage,
    wholeSite?: { siteId: string | undefined },
  ): Promise<RowPage<DeviceJsonRow>> {
    return orderedKeysetRows(
      {
        findMany: async (args) =>
          jsonRowsInOrder(
            db,
            pool,
            (await db.device.findMany({ ...args, skip: page.skip, select: { id: true } })).map((r) => r.id),
          ),
        count: wholeSite ? () => deviceList.countAt(db, wholeSite.siteId) : (args) => db.device.count(args),
      },
      where,
      page,
    );
  },
  /**
   * A whole site's list (or the fleet's) in id order, the devices as JSON_COLUMNS or
   * BRIEF_COLUMNS read them, and its count, in one statement (idOrderPageSql); undefined when
   * the site is unknown.
   */
  async listInIdOrder<C extends keyof typeof COLUMNS>(
    db: Db,
    pool: pg.Pool | undefined,
    columns: C,
    site: { slug: string } | { id: string } | undefined,
    afterId: string | undefined,
    limit: number,
  ): Promise<RowPage<C extends "json" ? DeviceJsonRow : DeviceBriefRow> | undefined> {
    type R = C extends "json" ? DeviceJsonRow : DeviceBriefRow;
    const sql = idOrderPageSql(columns, site && ("id" in site ? "id" : "slug"), afterId !== undefined);
    const params = [
      ...(site ? ["id" in site ? site.id : site.slug] : []),
      ...(afterId !== undefined ? [afterId] : []),
      limit + 1,
    ];
    const rows = await pooledRead<R & { siteId: string | null; count: number }>(
      db,
      pool,
      `devices-${columns}-page-${site ? ("id" in site ? "site-id" : "site-slug") : "fleet"}-${afterId === undefined ? "first" : "after"}`,
      sql,
      params,
    );
    if (rows.length === 0) return undefined;
    return { rows: rows[0]!.id === null ? [] : rows, count: Number(rows[0]!.count) };
  },
  /** `listJson` in the brief representation's columns: no relations but the site, no interfaces. */
  async listBrief(
    db: Db,
    where: Prisma.DeviceWhereInput,
    page: DevicePage,
    wholeSite?: { siteId: string | undefined },
  ): Promise<RowPage<DeviceBriefRow>> {
    return orderedKeysetRows(
      {
        findMany: async (args) =>
          (await db.device.findMany({ ...args, skip: page.skip, select: BRIEF_SELECT })).map(withObservations),
        count: wholeSite ? () => deviceList.countAt(db, wholeSite.siteId) : (args) => db.device.count(args),
      },
      where,
      page,
    );
  },
  /**
   * Devices matching `where` per group, each under the status it reads: the stored status when
   * fresh or quarantined, STALE otherwise (as deviceWhere filters). Two grouped statements
   * instead of one per (site, status); bySite false: the site is left out of the groups.
   */
  async countGroups(
    db: Db,
    where: Prisma.DeviceWhereInput,
    staleThreshold: Date,
    by: { site: boolean; status: boolean },
  ): Promise<{ siteId?: string; operationalStatus?: OperationalStatus; count: number }[]> {
    const quarantined = { operationalStatus: "QUARANTINED" } as const;
    const readsStored = { AND: [where, { OR: [freshWhere(staleThreshold), quarantined] }] };
    const readsStale = { AND: [where, staleWhere(staleThreshold), { NOT: quarantined }] };
    if (!by.status) {
      if (!by.site) return [{ count: await db.device.count({ where }) }];
      const rows = await db.device.groupBy({ by: ["siteId"], where, _count: { _all: true } });
      return rows.map((r) => ({ siteId: r.siteId, count: r._count._all }));
    }
    const [stored, stale] = await Promise.all([
      db.device.groupBy({
        by: by.site ? ["siteId", "operationalStatus"] : ["operationalStatus"],
        where: readsStored,
        _count: { _all: true },
      }),
      by.site
        ? db.device.groupBy({ by: ["siteId"], where: readsStale, _count: { _all: true } })
        : db.device.count({ where: readsStale }).then((n) => (n ? [{ _count: { _all: n } }] : [])),
    ]);
    return [
      ...stored.map((r) => ({
        ...(by.site ? { siteId: (r as { siteId: string }).siteId } : {}),
        operationalStatus: r.operationalStatus,
        count: r._count._all,
      })),
      ...stale.map((r: { siteId?: string; _count: { _all: number } }) => ({
        ...(r.siteId ? { siteId: r.siteId } : {}),
        operationalStatus: "STALE" as const,
        count: r._count._all,
      })),
    ];
  },
  /** The slugs of these sites, by id. */
  async siteSlugs(db: Db, ids: string[]): Promise<Map<string, string>> {
    const rows = await db.site.findMany({ where: { id: { in: [...new Set(ids)] } }, select: { id: true, slug: true } });
    return new Map(rows.map((r) => [r.id, r.slug]));
  },
  /** Devices at a site, or in the fleet: kept by triggers in every writing transaction, so exact. */
  async countAt(db: Db, siteId: string | undefined): Promise<number> {
    if (siteId) {
      const row = await db.siteDeviceCount.findUnique({ where: { siteId }, select: { devices: true } });
      return Number(row?.devices ?? 0);
    }
    const all = await db.siteDeviceCount.aggregate({ _sum: { devices: true } });
    return Number(all._sum.devices ?? 0);
  },
};
