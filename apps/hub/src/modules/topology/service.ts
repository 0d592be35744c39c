import { Unprocessable, type TopologySyncList, type TopologySyncRequest } from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetList, type PageQuery } from "../../lib/paging.ts";
import { recordChange } from "../../changes/recorder.ts";
import { requireSite } from "../sites/public.ts";
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
 * Files a topology-sync request for the site inside the caller's transaction (audited, not a
 * feed event). A site without a topology region is a 422. With a `requestId` a request already
 * filed under it is returned as it is: a job's workflow files one per job, however often it retries.
 */
export async function fileTopologySync(
  tx: Db,
  ctx: RequestContext,
  repo: Pick<TopologyRepo, "create" | "findByRequestId">,
  siteId: string,
  reason: string | null,
  requestId: string,
): Promise<TopologySyncRequestRow> {
  const site = await requireSite(tx, siteId);
  if (!site.region)
    throw new Unprocessable(
      "site_not_topology_target",
      `Site '${site.slug}' has no topology region, so it is not a topology-sync target`,
    );
  const earlier = await repo.findByRequestId(tx, siteId, requestId);
  if (earlier) return earlier;
  const created = await repo.create(tx, {
    siteId,
    region: site.region,
    reason,
    requestedBy: ctx.principal.id,
    requestId,
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
}

/**
 * Topology sync requests (a cableless node swap or the unenrolment of an active tray declares
 * the tray's removal). Only sites with a topology region are targets: the rest answer 422.
 */
export function createTopologyService({ prisma, repo }: { prisma: PrismaClient; repo: TopologyRepo }) {
  return {
    async request(ctx: RequestContext, siteId: string, reason: string | null): Promise<TopologySyncRequest> {
      const row = await prisma.$transaction((tx) => fileTopologySync(tx, ctx, repo, siteId, reason, ctx.requestId));
      return toTopologySyncRequest(row);
    },

    async list(siteId: string, query: PageQuery): Promise<TopologySyncList> {
      await requireSite(prisma, siteId);
      return keysetList(query, (page) => repo.list(prisma, siteId, page), toTopologySyncRequest);
    },
  };
}
export type TopologyService = ReturnType<typeof createTopologyService>;
