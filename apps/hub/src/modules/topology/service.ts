import { Unprocessable, type TopologySyncList, type TopologySyncRequest } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetList, type PageQuery } from "../../lib/paging.ts";
import { recordChange } from "../changes/recorder.ts";
import { requireSite } from "../sites/repo.ts";
import type { TopologyRepo, TopologySyncRequestRow } from "./repo.ts";

export const toTopologySyncRequest = (r: TopologySyncRequestRow): TopologySyncRequest => ({
  id: r.id,
  siteId: r.siteId,
  region: r.region,
  reason: r.reason,
  status: r.status,
  requestedBy: r.requestedBy,
  createdAt: r.createdAt.toISOString(),
});

/**
 * Topology sync requests (a cableless node swap or the unenrolment of an active tray declares
 * the tray's removal). Only sites with a topology region are targets: the rest answer 422.
 */
export function createTopologyService({ prisma, repo }: { prisma: PrismaClient; repo: TopologyRepo }) {
  return {
    async request(ctx: RequestContext, siteId: string, reason: string | null): Promise<TopologySyncRequest> {
      const row = await prisma.$transaction(async (tx) => {
        const site = await requireSite(tx, siteId);
        if (!site.region)
          throw new Unprocessable(
            "site_not_topology_target",
            `Site '${site.slug}' has no topology region, so it is not a topology-sync target`,
          );
        const created = await repo.create(tx, {
          siteId,
          region: site.region,
          reason,
          requestedBy: ctx.principal.id,
          requestId: ctx.requestId,
        });
        await recordChange(tx, ctx, {
          resourceType: "topology_sync_request",
          resourceId: created.id,
          siteId,
          verb: "created",
          before: null,
          after: toTopologySyncRequest(created),
          action: "site.topology_sync",
          feed: false,
        });
        return created;
      });
      return toTopologySyncRequest(row);
    },

    async list(siteId: string, query: PageQuery): Promise<TopologySyncList> {
      await requireSite(prisma, siteId);
      return keysetList(query, (page) => repo.list(prisma, siteId, page), toTopologySyncRequest);
    },
  };
}
export type TopologyService = ReturnType<typeof createTopologyService>;
