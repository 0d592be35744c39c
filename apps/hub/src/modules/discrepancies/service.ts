/**
 * The discrepancy report. Open discrepancies are kept with the time each was first seen:
 * `reconcileDiscrepancies` rewrites a site's set inside the transaction of every write that
 * can open or close one: an accepted reflection (for the devices it touched), a device change
 * of a field they read (a cordon, a job's observation: devices.apply), and a role's new device
 * class (every site with devices of the role), so a
 * row's `first_seen_at` is when the hub first saw that disagreement, and it disappears the
 * moment the sources agree. Kept, not derived from device history: history records each
 * field's changes, and a disagreement is a relation between fields of several sources, so
 * "since" would have to be replayed per kind. `unobserved` alone depends on the clock; the
 * repo derives it when asked (see repo.ts).
 */
import { DISCREPANCY_KINDS, UNMATCHED_SOURCES, deviceDiscrepancies, sameJson, unmatchedDiscrepancy } from "@fm/domain";
import type {
  Discrepancy,
  DiscrepancyKind,
  DiscrepancyFleetQuery,
  DiscrepancyList,
  DiscrepancyListQuery,
  DiscrepancySummary,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetList } from "../../lib/paging.ts";
import { requireSite, resolveSiteIds } from "../sites/public.ts";
import { discrepancyRepo, type DiscrepancyRepo, type KeptDiscrepancy, type ReportRow } from "./repo.ts";

/** What a push says about unmatched items: its source, and the key of every item matching no device. */
export interface PushedUnmatched {
  source: string;
  keys: string[];
}

/**
 * Rewrites the kept discrepancies of a site to what its devices say now: new ones are inserted
 * with `now` as first seen, cleared ones deleted, open ones keep their first-seen time. The
 * unmatched-item kinds of a source change only with a push of that source (`pushed`).
 * `devices`, when given, are the only devices whose fields may have changed since the last
 * reconciliation (the ones the caller wrote or first observed): only theirs are derived again,
 * and every other device's kept discrepancies stay as they are. A caller that changed what
 * every device's discrepancies depend on (a site's first Ironic report, device classes) or does
 * not know what it changed passes none: the whole site is derived again.
 */
export async function reconcileDiscrepancies(
  db: Db,
  siteId: string,
  now: Date,
  pushed?: PushedUnmatched,
  devices?: ReadonlySet<string>,
): Promise<void> {
  await discrepancyRepo.lockSite(db, siteId);
  // One after the other: a transaction has one connection, and pg deprecates queueing on it.
  const rows = await discrepancyRepo.devices(db, siteId, devices && [...devices]);
  const ironicReports = await discrepancyRepo.ironicReports(db, siteId);
  const open = await discrepancyRepo.open(db, siteId);
  const wanted = new Map<string, KeptDiscrepancy>();
  for (const d of rows)
    for (const f of deviceDiscrepancies(d, { ironicReports }))
      wanted.set(`${f.kind}|${d.id}`, {
        kind: f.kind,
        subject: d.id,
        deviceId: d.id,
        name: d.name,
        observed: f.observed,
      });
  const ownsUnmatched = pushed !== undefined && UNMATCHED_SOURCES.includes(pushed.source);
  if (ownsUnmatched)
    for (const key of new Set(pushed.keys)) {
      const f = unmatchedDiscrepancy(pushed.source, key);
      wanted.set(`${f.kind}|${f.subject}`, { ...f, deviceId: null, name: key.slice(0, 200) });
    }
  // An unmatched item of another source stays as its own last push left it.
  // A device's own discrepancies have its id as subject; one outside `devices` stays as it is.
  const managed = (row: { kind: string; subject: string }) =>
    row.subject.includes(":")
      ? ownsUnmatched && row.subject.startsWith(`${pushed.source}:`)
      : !devices || devices.has(row.subject);
  const gone: string[] = [];
  for (const row of open) {
    const key = `${row.kind}|${row.subject}`;
    const want = wanted.get(key);
    if (!want) {
      if (managed(row)) gone.push(row.id);
      continue;
    }
    wanted.delete(key);
    if (!sameJson(want.observed, row.observed)) await discrepancyRepo.updateObserved(db, row.id, want.observed);
  }
  await discrepancyRepo.remove(db, gone);
  await discrepancyRepo.insert(db, siteId, [...wanted.values()], now);
}

/**
 * A role's device class changed: every site with devices of these roles is derived again whole
 * (the class decides which devices Ironic must know).
 */
export async function reconcileSitesOfRoles(db: Db, roleIds: readonly string[], now: Date): Promise<void> {
  if (!roleIds.length) return;
  for (const siteId of await discrepancyRepo.sitesWithRoles(db, roleIds)) await reconcileDiscrepancies(db, siteId, now);
}

function toDiscrepancy(row: ReportRow): Discrepancy {
  return {
    id: row.id,
    siteId: row.siteId,
    kind: row.kind as DiscrepancyKind,
    deviceId: row.deviceId,
    name: row.name,
    observed: row.observed ?? { "hub.lastObservedAt": row.lastSeenAt?.toISOString() ?? null },
    since: row.since.toISOString(),
  };
}

export interface DiscrepancyServiceDeps {
  prisma: PrismaClient;
  repo: DiscrepancyRepo;
  /** A device no source has observed for this long is `unobserved` (FM_STALE_AFTER_S). */
  staleAfterMs: number;
  now?: () => Date;
}

export function createDiscrepancyService({
  prisma,
  repo,
  staleAfterMs,
  now = () => new Date(),
}: DiscrepancyServiceDeps) {
  return {
    async list(_ctx: RequestContext, siteId: string, query: DiscrepancyListQuery): Promise<DiscrepancyList> {
      await requireSite(prisma, siteId);
      const at = now();
      const filter = { siteIds: [siteId], kinds: query.kind ? [query.kind] : undefined };
      return keysetList(query, (page) => repo.page(prisma, filter, at, staleAfterMs, page), toDiscrepancy);
    },

    /** The fleet's report, narrowed to sites (slugs or ids; an unknown one is a 400), kinds and a name. */
    async fleetList(_ctx: RequestContext, query: DiscrepancyFleetQuery): Promise<DiscrepancyList> {
      const siteIds = query.site ? await resolveSiteIds(prisma, query.site, "site") : undefined;
      const at = now();
      const filter = { siteIds, kinds: query.kind, name: query.name };
      return keysetList(query, (page) => repo.page(prisma, filter, at, staleAfterMs, page), toDiscrepancy);
    },

    async summary(_ctx: RequestContext): Promise<DiscrepancySummary> {
      const rows = await repo.counts(prisma, now(), staleAfterMs);
      const byKind = Object.fromEntries(DISCREPANCY_KINDS.map((k) => [k, 0])) as Record<DiscrepancyKind, number>;
      const sites = new Map<string, DiscrepancySummary["sites"][number]>();
      for (const r of rows) {
        byKind[r.kind as DiscrepancyKind] += r.n;
        const site = sites.get(r.siteId) ?? { siteId: r.siteId, slug: r.slug, total: 0, byKind: {} };
        site.total += r.n;
        site.byKind[r.kind as DiscrepancyKind] = r.n;
        sites.set(r.siteId, site);
      }
      return { total: rows.reduce((n, r) => n + r.n, 0), byKind, sites: [...sites.values()] };
    },

    /** Open discrepancies per site (slug) and kind, for the metric. */
    async counts(): Promise<{ slug: string; kind: string; n: number }[]> {
      return repo.counts(prisma, now(), staleAfterMs);
    },
  };
}
export type DiscrepancyService = ReturnType<typeof createDiscrepancyService>;
