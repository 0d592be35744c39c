import { NotFound, Unprocessable, siteFlagsRefusal, siteReporting, siteSources } from "@fm/domain";
import type { Site, SiteCreate, SiteRecord, SiteList, SiteListQuery, SitePatch } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { checkIfMatch } from "../../lib/etag.ts";
import { keysetList } from "../../lib/paging.ts";
import { recordChange } from "../../changes/recorder.ts";
import type { SiteRepo, SiteRow, SiteWithPushes } from "./repo.ts";

/** The site's own fields: what the audit log and the feed record of a change. */
export function siteFields(row: SiteRow): SiteRecord {
  const { reflectionStates: _pushes, impairmentHeldSince, impairmentHoldMessage, ...fields } = row as SiteWithPushes;
  return {
    ...fields,
    impairmentHold: impairmentHeldSince
      ? { since: impairmentHeldSince.toISOString(), message: impairmentHoldMessage ?? "" }
      : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The representation: the site's fields, and each source's silence as of `now` with the Reporting condition. */
export function toSite(row: SiteRow | SiteWithPushes, now: Date, silenceAfterMs: number): Site {
  const pushes = "reflectionStates" in row ? row.reflectionStates : [];
  const sources = siteSources(pushes, now, silenceAfterMs);
  return { ...siteFields(row), sources, conditions: [siteReporting(sources, silenceAfterMs)] };
}

export interface SiteServiceDeps {
  prisma: PrismaClient;
  repo: SiteRepo;
  /** A source that has not pushed for this long makes the site's Reporting condition False. */
  silenceAfterMs: number;
  now?: () => Date;
}

const notFound = (id: string) => new NotFound("site_not_found", `No site with id ${id}`);

/** The flags a site would have after a create or patch, refused when incoherent (a 422 naming the field). */
function checkFlags(flags: { slurmEnabled: boolean; openstackSlurmEnabled: boolean }): void {
  const refusal = siteFlagsRefusal(flags);
  if (refusal)
    throw new Unprocessable("site_flags_conflict", refusal, {
      errors: [{ path: "body.openstackSlurmEnabled", message: refusal }],
    });
}

/** Rules for sites. Every write runs in one transaction; reads of one page share a snapshot. */
export function createSiteService({ prisma, repo, silenceAfterMs, now = () => new Date() }: SiteServiceDeps) {
  const represent = (row: SiteRow | SiteWithPushes) => toSite(row, now(), silenceAfterMs);
  return {
    async list(_ctx: RequestContext, query: SiteListQuery): Promise<SiteList> {
      const filter = { slug: query.slug, region: query.region, q: query.q };
      return keysetList(query, (page) => repo.list(prisma, filter, page), represent);
    },

    /** Each (site, source) that has pushed, with its silence now: the metric's samples. */
    async silence(): Promise<{ slug: string; source: string; silenceSeconds: number }[]> {
      const at = now();
      return (await repo.lastPushes(prisma)).map((p) => ({
        slug: p.slug,
        source: p.source,
        silenceSeconds: siteSources([p], at, silenceAfterMs)[0]!.silenceSeconds,
      }));
    },

    async get(_ctx: RequestContext, id: string): Promise<Site> {
      const row = await repo.findById(prisma, id);
      if (!row) throw notFound(id);
      return represent(row);
    },

    async create(ctx: RequestContext, input: SiteCreate): Promise<Site> {
      checkFlags({
        slurmEnabled: input.slurmEnabled ?? false,
        openstackSlurmEnabled: input.openstackSlurmEnabled ?? false,
      });
      const row = await prisma.$transaction(async (tx) => {
        const created = await repo.create(tx, input);
        await recordChange(tx, ctx, {
          resourceType: "site",
          resourceId: created.id,
          siteId: created.id,
          verb: "created",
          before: null,
          after: siteFields(created),
        });
        return created;
      });
      ctx.log.info({ siteId: row.id, slug: row.slug }, "site created");
      return represent(row);
    },

    async update(ctx: RequestContext, id: string, patch: SitePatch, ifMatch: string | undefined): Promise<Site> {
      const row = await prisma.$transaction(async (tx) => {
        const current = await repo.lockById(tx, id);
        if (!current) throw notFound(id);
        checkIfMatch(ifMatch, current);
        checkFlags({
          slurmEnabled: patch.slurmEnabled ?? current.slurmEnabled,
          openstackSlurmEnabled: patch.openstackSlurmEnabled ?? current.openstackSlurmEnabled,
        });
        const updated = await repo.update(tx, id, patch);
        await recordChange(tx, ctx, {
          resourceType: "site",
          resourceId: id,
          siteId: id,
          verb: "updated",
          before: siteFields(current),
          after: siteFields(updated),
        });
        return updated;
      });
      ctx.log.info({ siteId: id, fields: Object.keys(patch) }, "site updated");
      return represent(row);
    },

    async remove(ctx: RequestContext, id: string, ifMatch: string | undefined): Promise<void> {
      await prisma.$transaction(async (tx) => {
        const current = await repo.lockById(tx, id);
        if (!current) throw notFound(id);
        checkIfMatch(ifMatch, current);
        await repo.delete(tx, id);
        await recordChange(tx, ctx, {
          resourceType: "site",
          resourceId: id,
          siteId: id,
          verb: "deleted",
          before: siteFields(current),
          after: null,
        });
      });
      ctx.log.info({ siteId: id }, "site deleted");
    },
  };
}
export type SiteService = ReturnType<typeof createSiteService>;
