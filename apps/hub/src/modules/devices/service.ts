import {
  DISCREPANCY_INPUTS,
  NotFound,
  OPERATIONAL_STATUSES,
  Unprocessable,
  decodeSequenceCursor,
  encodeSequenceCursor,
  sameJson,
} from "@fm/domain";
import type {
  Device,
  DeviceHistoryEntry,
  DeviceHistoryList,
  DeviceHistoryQuery,
  DeviceBriefList,
  DeviceCountQuery,
  DeviceCounts,
  DeviceListQuery,
  DevicePatch,
} from "@fm/domain";
import type pg from "pg";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { recordChange, recordChanges, type Change } from "../../changes/recorder.ts";
import type { ChangeContext, RequestContext } from "../../lib/context.ts";
import { checkIfMatch } from "../../lib/etag.ts";
import { keysetList, type CursorCodec } from "../../lib/paging.ts";
import { reconcileDiscrepancies } from "../discrepancies/public.ts";
import { resolveSiteId, siteRef, unknownSite } from "../sites/public.ts";
import {
  deviceWhere,
  wholeSiteOf,
  type BulkColumn,
  type DeviceBriefRow,
  type DeviceRepo,
  type DeviceHistoryRow,
  type DeviceJsonRow,
  type DeviceRow,
} from "./repo.ts";
import type { DeviceBase } from "../../db/device-columns.ts";
import { deviceListPage } from "./sort.ts";
import { TRACKED, storedStatus, toDevice, toDeviceBrief, toDeviceJson } from "./state.ts";

export interface DeviceServiceDeps {
  prisma: PrismaClient;
  repo: DeviceRepo;
  /** The pool behind `prisma`: the device list reads through it directly (repo's readOnly). */
  pool?: pg.Pool | undefined;
  /** A source that has not observed a device for this long makes it STALE. */
  staleAfterMs: number;
  now?: () => Date;
}

type DeviceChanges = Partial<
  Omit<DeviceBase, "id" | "siteId" | "version" | "createdAt" | "updatedAt" | "operationalStatus" | "conditions">
>;

/**
 * The before-image for the audit record. A bare row borrows its relations from the updated
 * row, which is right while the bare-row callers (Ironic, SLURM, health reflections) never
 * change relations; a caller that does (NetBox) passes the full row.
 */
const withRelations = (current: DeviceBase | DeviceRow, row: DeviceRow): DeviceRow =>
  "site" in current
    ? current
    : {
        ...row,
        ...current,
        site: row.site,
        rack: row.rack,
        deviceType: row.deviceType,
        deviceRole: row.deviceRole,
        interfaces: row.interfaces,
      };

export const toDeviceHistoryEntry = (h: DeviceHistoryRow): DeviceHistoryEntry => ({
  id: h.id.toString(),
  field: h.field,
  source: h.source,
  oldValue: h.oldValue,
  newValue: h.newValue,
  principal: h.principal,
  requestId: h.requestId,
  changedAt: h.changedAt.toISOString(),
});
const historyCursor: CursorCodec<bigint> = { decode: decodeSequenceCursor, encode: encodeSequenceCursor };

/** Columns that change a device's relations (its representation then needs a fresh read). */
const RELATION_FIELDS = new Set<string>(["siteId", "rackId", "deviceTypeId", "deviceRoleId"]);

const notFound = (id: string) => new NotFound("device_not_found", `No device with id ${id}`);

/** Cheap equality for column values: primitives, dates, arrays and JSON (null and undefined alike). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b || (a == null && b == null)) return true;
  if (a == null || b == null) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (typeof a === "object" && typeof b === "object") return sameJson(a, b);
  return false;
}

/** Would these changes alter any field of the device? */
export function differs(current: object, changes: object): boolean {
  // for…in, not Object.entries: a reflection asks this of every device it lists (10,000 and more).
  for (const k in changes)
    if (!sameValue((current as Record<string, unknown>)[k], (changes as Record<string, unknown>)[k])) return true;
  return false;
}

export function createDeviceService({ prisma, repo, pool, staleAfterMs, now = () => new Date() }: DeviceServiceDeps) {
  /**
   * The commonest page, a whole site's (or the fleet's) in id order, as one statement (the
   * site, its count and the rows): the fetch of deviceListPage.
   */
  const wholeSitePage =
    <C extends "json" | "brief">(query: DeviceListQuery, columns: C) =>
    async (p: { afterId: string | undefined; limit: number }) => {
      const site = query.site ? siteRef(query.site) : undefined;
      const rows = await repo.listInIdOrder(prisma, pool, columns, site, p.afterId, p.limit);
      if (!rows) throw unknownSite(query.site!, "site");
      return rows;
    };
  /** listJson's page of any other filter or order: the page's ids through Prisma, then their JSON rows. */
  async function filteredJsonPage(query: DeviceListQuery, at: Date, toItem: (row: DeviceJsonRow) => string) {
    const siteId = query.site ? await resolveSiteId(prisma, query.site, "site") : undefined;
    const filter = { ...query, siteId };
    const where = deviceWhere(filter, new Date(at.getTime() - staleAfterMs));
    return deviceListPage(query, (p) => repo.listJson(prisma, pool, where, p, wholeSiteOf(filter)), toItem);
  }

  /** The representation as a reader sees it now (staleness depends on the clock). */
  const toDeviceNow = (row: DeviceRow) => toDevice(row, now(), staleAfterMs);

  /**
   * Applies changes from one source to a device inside the caller's transaction: re-derives
   * its status, writes a history entry per tracked field that changed, the audit record and
   * the feed event. Returns null when nothing changed (nothing is written). `current` may be
   * the bare row: its relations are read only when something changed (reflections compare
   * thousands of devices and change few).
   */
  async function apply(
    db: Db,
    ctx: ChangeContext,
    current: DeviceBase | DeviceRow,
    changes: DeviceChanges,
    source: string,
  ): Promise<DeviceRow | null> {
    const at = now();
    const { next, changed } = evolve(current, changes, at);
    if (!changed) return null;
    await repo.addHistory(db, historyOf(ctx, current, next, source, at));
    const row = await repo.update(db, current.id, {
      ...(changes as Prisma.DeviceUncheckedUpdateInput),
      operationalStatus: next.operationalStatus,
      conditions: next.conditions as Prisma.InputJsonValue,
    });
    await recordChange(db, ctx, {
      resourceType: "device",
      resourceId: row.id,
      siteId: row.siteId,
      verb: "updated",
      before: toDeviceNow(withRelations(current, row)),
      after: toDeviceNow(row),
    });
    // A cordon, a job's observation of its node or NetBox status: this device's discrepancies
    // open or close with it (a reflection reconciles the devices it wrote itself, once).
    if (DISCREPANCY_INPUTS.some((f) => !sameValue(current[f], row[f])))
      await reconcileDiscrepancies(db, row.siteId, at, undefined, new Set([row.id]));
    return row;
  }

  /**
   * The cordon fields of a cordon (`cordoned` true), an uncordon (false) or a new reason. A cordon
   * by a person or a job takes over an impairment cordon: impairment will not release it.
   */
  function cordonChanges(
    current: DeviceRow,
    cordon: boolean | undefined,
    reason: string | null | undefined,
    by: string,
  ): DeviceChanges {
    const cordoned = cordon ?? current.cordoned;
    if (cordon === true && !(current.cordoned && current.cordonSource === "operator"))
      return { cordoned: true, cordonReason: reason, cordonedBy: by, cordonedAt: now(), cordonSource: "operator" };
    if (!cordoned && current.cordoned)
      return { cordoned: false, cordonReason: null, cordonedBy: null, cordonedAt: null, cordonSource: null };
    if (cordoned && reason) return { cordonReason: reason };
    return {};
  }

  /** Applies changes that may cordon or uncordon (apply reconciles the discrepancies that depend on it). */
  async function applyCordon(
    tx: Db,
    ctx: ChangeContext,
    current: DeviceRow,
    changes: DeviceChanges,
    source: string,
  ): Promise<DeviceRow> {
    return (await apply(tx, ctx, current, changes, source)) ?? current;
  }

  /** What `changes` would make of `current`: the next row, its derived status, and whether anything differs. */
  function evolve(current: DeviceBase, changes: DeviceChanges, at: Date, force = false) {
    // Fast path, taken by most devices of most pushes: no field differs, so neither does the
    // stored status (it depends on the fields only, never on the clock).
    if (!force && !differs(current, changes)) return { next: current, changed: false };
    const next = { ...current, ...changes } as DeviceBase;
    const derived = storedStatus(next, at);
    next.operationalStatus = derived.operationalStatus;
    next.conditions = derived.conditions;
    const changed =
      force ||
      Object.entries(changes).some(([k, v]) => !sameJson((current as Record<string, unknown>)[k], v)) ||
      next.operationalStatus !== current.operationalStatus ||
      !sameJson(next.conditions, current.conditions);
    return { next, changed };
  }

  function historyOf(
    ctx: ChangeContext,
    current: DeviceBase,
    next: DeviceBase,
    source: string,
    at: Date,
  ): Prisma.DeviceHistoryCreateManyInput[] {
    return TRACKED.filter((t) => !sameJson(t.read(current), t.read(next))).map((t) => ({
      deviceId: current.id,
      field: t.field,
      source: t.field === "operationalStatus" ? "hub" : source,
      oldValue: t.read(current) ?? undefined,
      newValue: t.read(next) ?? undefined,
      principal: ctx.principal.id,
      requestId: ctx.requestId,
      changedAt: at,
    }));
  }

  /**
   * `apply` for many devices of one source at once, with the same outcome (status, history,
   * audit, feed per changed device) in a fixed number of statements: one history insert, one
   * bulk UPDATE of `columns`, one audit insert, one feed insert, and a read of the changed rows
   * only when their relations may have changed (a relation column, or `force`). Otherwise the
   * row after is the full row before with the changes, the derived status, the new version and
   * updated_at: exactly what the UPDATE wrote, provided the caller read `current` locked
   * (deviceRepo.lockByIds), so nothing else changed the row in between.
   * `columns` must cover every field the changes set. Returns how many devices changed.
   */
  async function applyMany(
    db: Db,
    ctx: ChangeContext,
    entries: { current: DeviceRow; changes: DeviceChanges; force?: boolean }[],
    source: string,
    columns: readonly BulkColumn[],
  ): Promise<number> {
    const at = now();
    // `force`: something outside the columns changed (NetBox interfaces), so the device is
    // written (version, audit, feed) even when its columns are equal.
    const changed = entries
      .map((e) => ({ ...e, ...evolve(e.current, e.changes, at, e.force) }))
      .filter((e) => e.changed);
    if (!changed.length) return 0;
    const allowed = new Set(columns.map((c) => c.field));
    for (const e of changed)
      for (const k of Object.keys(e.changes))
        if (!allowed.has(k as BulkColumn["field"])) throw new Error(`applyMany: ${k} is not among the bulk columns`);
    await repo.addHistory(
      db,
      changed.flatMap((e) => historyOf(ctx, e.current, e.next, source, at)),
    );
    await repo.updateMany(
      db,
      columns,
      changed.map((e) => ({ id: e.current.id, values: e.next })),
      at,
    );
    const reread =
      changed.some((e) => e.force) || columns.some((c) => RELATION_FIELDS.has(c.field))
        ? new Map(
            (
              await repo.findByIds(
                db,
                changed.map((e) => e.current.id),
              )
            ).map((r) => [r.id, r]),
          )
        : undefined;
    const records: Change[] = changed.map((e) => {
      const row =
        reread?.get(e.current.id) ??
        ({ ...(e.next as DeviceRow), version: e.current.version + 1, updatedAt: at } satisfies DeviceRow);
      return {
        resourceType: "device",
        resourceId: row.id,
        siteId: row.siteId,
        verb: "updated",
        before: toDeviceNow(e.current),
        after: toDeviceNow(row),
      };
    });
    await recordChanges(db, ctx, records);
    return changed.length;
  }

  /** Creates a device with its derived status (the NetBox reflection and the demo data use it). */
  async function create(db: Db, ctx: ChangeContext, data: Prisma.DeviceUncheckedCreateInput): Promise<DeviceRow> {
    const draft = {
      cordoned: false,
      cordonReason: null,
      netboxMissing: false,
      slurmStateFlags: [],
      conditions: [],
      ...data,
    } as unknown as DeviceBase;
    const derived = storedStatus(draft, now());
    const row = await repo.create(db, {
      ...data,
      operationalStatus: derived.operationalStatus,
      conditions: derived.conditions,
    });
    await recordChange(db, ctx, {
      resourceType: "device",
      resourceId: row.id,
      siteId: row.siteId,
      verb: "created",
      before: null,
      after: toDeviceNow(row),
    });
    return row;
  }

  return {
    apply,
    applyMany,
    create,
    toDevice: toDeviceNow,

    /** The list in the brief representation (brief=true); the full one is listJson. */
    async listBrief(_ctx: RequestContext, query: DeviceListQuery): Promise<DeviceBriefList> {
      const staleBefore = new Date(now().getTime() - staleAfterMs);
      const toItem = (row: DeviceBriefRow) => toDeviceBrief(row, staleBefore);
      if (!query.sort && !query.page && wholeSiteOf(query))
        return deviceListPage(query, wholeSitePage(query, "brief"), toItem);
      const siteId = query.site ? await resolveSiteId(prisma, query.site, "site") : undefined;
      const filter = { ...query, siteId };
      return deviceListPage(
        query,
        (page) => repo.listBrief(prisma, deviceWhere(filter, staleBefore), page, wholeSiteOf(filter)),
        toItem,
      );
    },

    /**
     * The full list (brief unset) as the JSON text of its DeviceList page: each item
     * written by PostgreSQL but for what is derived at read time, so a page of 100 devices costs
     * no object per field, no validation and no re-serialisation.
     */
    async listJson(_ctx: RequestContext, query: DeviceListQuery): Promise<string> {
      const at = now();
      const toItem = (row: DeviceJsonRow) => toDeviceJson(row, at, staleAfterMs);
      const page =
        !query.sort && !query.page && wholeSiteOf(query)
          ? await deviceListPage(query, wholeSitePage(query, "json"), toItem)
          : await filteredJsonPage(query, at, toItem);
      return `{"items":[${page.items.join(",")}],"count":${page.count},"nextCursor":${JSON.stringify(page.nextCursor)}}`;
    },

    /** Exact counts of the devices the list would show for these filters, grouped as asked. */
    async counts(_ctx: RequestContext, query: DeviceCountQuery): Promise<DeviceCounts> {
      const { groupBy = [], ...filters } = query;
      const siteId = filters.site ? await resolveSiteId(prisma, filters.site, "site") : undefined;
      const staleBefore = new Date(now().getTime() - staleAfterMs);
      const where = deviceWhere({ ...filters, siteId }, staleBefore);
      const by = { site: groupBy.includes("site"), status: groupBy.includes("operationalStatus") };
      const rows = await repo.countGroups(prisma, where, staleBefore, by);
      const sites = by.site
        ? await repo.siteSlugs(
            prisma,
            rows.map((r) => r.siteId!),
          )
        : new Map<string, string>();
      const groups = rows
        .filter((r) => r.count > 0)
        .map((r) => ({
          ...(by.site ? { site: { id: r.siteId!, slug: sites.get(r.siteId!) ?? "" } } : {}),
          ...(by.status ? { operationalStatus: r.operationalStatus! } : {}),
          count: r.count,
        }))
        .sort(
          (a, b) =>
            (a.site?.slug ?? "").localeCompare(b.site?.slug ?? "") ||
            OPERATIONAL_STATUSES.indexOf(a.operationalStatus ?? "UNKNOWN") -
              OPERATIONAL_STATUSES.indexOf(b.operationalStatus ?? "UNKNOWN"),
        );
      return { total: rows.reduce((n, r) => n + r.count, 0), groups: groupBy.length ? groups : [] };
    },

    /**
     * A job's workflow cordons or uncordons one of the job's devices (locked by the caller), as
     * an operator would: the cordon is the person's who created the job, recorded as the job's.
     */
    cordonByJob(
      tx: Db,
      ctx: ChangeContext,
      current: DeviceRow,
      cordon: { cordoned: boolean; reason?: string | undefined },
      job: string,
    ): Promise<DeviceRow> {
      return applyCordon(tx, ctx, current, cordonChanges(current, cordon.cordoned, cordon.reason, job), job);
    },

    async get(_ctx: RequestContext, id: string): Promise<Device> {
      const row = await repo.findById(prisma, id);
      if (!row) throw notFound(id);
      return toDeviceNow(row);
    },

    async patch(ctx: RequestContext, id: string, patch: DevicePatch, ifMatch: string | undefined): Promise<Device> {
      const row = await prisma.$transaction(async (tx) => {
        const current = await repo.lockById(tx, id);
        if (!current) throw notFound(id);
        checkIfMatch(ifMatch, current);
        const cordoned = patch.cordoned ?? current.cordoned;
        if (!cordoned && patch.cordonReason) {
          throw new Unprocessable(
            "cordon_reason_without_cordon",
            "A cordon reason can only be set on a cordoned device (send cordoned: true)",
          );
        }
        const changes: DeviceChanges = {
          ...(patch.notes !== undefined ? { notes: patch.notes } : {}),
          ...cordonChanges(current, patch.cordoned, patch.cordonReason, ctx.principal.id),
        };
        return applyCordon(tx, ctx, current, changes, "operator");
      });
      ctx.log.info({ deviceId: id, fields: Object.keys(patch) }, "device updated by operator");
      return toDeviceNow(row);
    },

    async history(_ctx: RequestContext, id: string, query: DeviceHistoryQuery): Promise<DeviceHistoryList> {
      if (!(await repo.exists(prisma, id))) throw notFound(id);
      return keysetList(
        query,
        (page) => repo.history(prisma, id, query.field, page),
        toDeviceHistoryEntry,
        historyCursor,
      );
    },
  };
}
export type DeviceService = ReturnType<typeof createDeviceService>;
