import { Unprocessable } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetPage } from "../../lib/paging.ts";
import { requireSite } from "../sites/repo.ts";

type Row = Prisma.TopologySyncRequestGetPayload<object>;
const present = (r: Row) => ({
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
export function createTopologyService({ prisma }: { prisma: PrismaClient }) {
  return {
    async request(ctx: RequestContext, siteId: string, reason: string | null) {
      const row = await prisma.$transaction(async (tx) => {
        const site = await requireSite(tx, siteId);
        if (!site.region)
          throw new Unprocessable(
            "site_not_topology_target",
            `Site '${site.slug}' has no topology region, so it is not a topology-sync target`,
          );
        const created = await tx.topologySyncRequest.create({
          data: { siteId, region: site.region, reason, requestedBy: ctx.principal.id, requestId: ctx.requestId },
        });
        await recordChange(tx, ctx, {
          resourceType: "topology_sync_request",
          resourceId: created.id,
          siteId,
          verb: "created",
          before: null,
          after: present(created),
          action: "site.topology_sync",
          feed: false,
        });
        return created;
      });
      return present(row);
    },

    async list(siteId: string, q: { limit: number; cursor?: string | undefined }, afterId: string | undefined) {
      await requireSite(prisma, siteId);
      const [rows, count] = await Promise.all([
        prisma.topologySyncRequest.findMany({
          where: { siteId, ...(afterId ? { id: { gt: afterId } } : {}) },
          orderBy: { id: "asc" },
          take: q.limit + 1,
        }),
        prisma.topologySyncRequest.count({ where: { siteId } }),
      ]);
      return keysetPage(rows, count, q.limit, present);
    },
  };
}
export type TopologyService = ReturnType<typeof createTopologyService>;
