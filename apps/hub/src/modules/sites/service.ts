import { NotFound } from "@fm/domain";
import type { Site, SiteCreate, SiteList, SiteListQuery, SitePatch } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { checkIfMatch } from "../../lib/etag.ts";
import { keysetList } from "../../lib/paging.ts";
import { recordChange } from "../changes/recorder.ts";
import type { SiteRepo, SiteRow } from "./repo.ts";

export function toSite(row: SiteRow): Site {
  const { impairmentHeldSince, impairmentHoldMessage, ...rest } = row;
  return {
    ...rest,
    impairmentHold: impairmentHeldSince
      ? { since: impairmentHeldSince.toISOString(), message: impairmentHoldMessage ?? "" }
      : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface SiteServiceDeps {
  prisma: PrismaClient;
  repo: SiteRepo;
}

const notFound = (id: string) => new NotFound("site_not_found", `No site with id ${id}`);

/** Rules for sites. Every write runs in one transaction; reads of one page share a snapshot. */
export function createSiteService({ prisma, repo }: SiteServiceDeps) {
  return {
    async list(_ctx: RequestContext, query: SiteListQuery): Promise<SiteList> {
      const filter = { slug: query.slug, region: query.region, q: query.q };
      return keysetList(query, (page) => repo.list(prisma, filter, page), toSite);
    },

    async get(_ctx: RequestContext, id: string): Promise<Site> {
      const row = await repo.findById(prisma, id);
      if (!row) throw notFound(id);
      return toSite(row);
    },

    async create(ctx: RequestContext, input: SiteCreate): Promise<Site> {
      const row = await prisma.$transaction(async (tx) => {
        const created = await repo.create(tx, input);
        await recordChange(tx, ctx, {
          resourceType: "site",
          resourceId: created.id,
          siteId: created.id,
          verb: "created",
          before: null,
          after: toSite(created),
        });
        return created;
      });
      ctx.log.info({ siteId: row.id, slug: row.slug }, "site created");
      return toSite(row);
    },

    async update(ctx: RequestContext, id: string, patch: SitePatch, ifMatch: string | undefined): Promise<Site> {
      const row = await prisma.$transaction(async (tx) => {
        const current = await repo.lockById(tx, id);
        if (!current) throw notFound(id);
        checkIfMatch(ifMatch, current);
        const updated = await repo.update(tx, id, patch);
        await recordChange(tx, ctx, {
          resourceType: "site",
          resourceId: id,
          siteId: id,
          verb: "updated",
          before: toSite(current),
          after: toSite(updated),
        });
        return updated;
      });
      ctx.log.info({ siteId: id, fields: Object.keys(patch) }, "site updated");
      return toSite(row);
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
          before: toSite(current),
          after: null,
        });
      });
      ctx.log.info({ siteId: id }, "site deleted");
    },
  };
}
export type SiteService = ReturnType<typeof createSiteService>;
