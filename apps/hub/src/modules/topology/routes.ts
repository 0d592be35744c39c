import { keysetPage } from "../../lib/paging.ts";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { IdParams, NotFound, TopologySyncCreateSchema, TopologySyncListQuerySchema, TopologySyncListSchema, TopologySyncRequestSchema, Unprocessable, decodeCursor } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import { errorResponses } from "../../lib/openapi.ts";

type Row = Prisma.TopologySyncRequestGetPayload<object>;
const present = (r: Row) => ({ id: r.id, siteId: r.siteId, region: r.region, reason: r.reason, status: r.status, requestedBy: r.requestedBy, createdAt: r.createdAt.toISOString() });

/**
 * Topology sync requests (a cableless node swap or the unenrolment of an active tray declares
 * the tray's removal). Only sites with a topology region are targets: the rest answer 422.
 */
export function registerTopology(app: FastifyInstance, { prisma }: { prisma: PrismaClient }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["sites"];
  r.post(
    "/api/v1/sites/:id/topology-sync",
    {
      config: { scope: "fleet.operate", idempotent: true },
      schema: { tags, summary: "Request a topology sync for a site", params: IdParams, body: TopologySyncCreateSchema.nullish(), response: { 202: TopologySyncRequestSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 422) } },
    },
    async (request, reply) => {
      const siteId = request.params.id;
      const row = await prisma.$transaction(async (tx) => {
        const site = await tx.site.findUnique({ where: { id: siteId } });
        if (!site) throw new NotFound("site_not_found", `No site with id ${siteId}`);
        if (!site.region) throw new Unprocessable("site_not_topology_target", `Site '${site.slug}' has no topology region, so it is not a topology-sync target`);
        const created = await tx.topologySyncRequest.create({ data: { siteId, region: site.region, reason: request.body?.reason ?? null, requestedBy: request.ctx.principal.id, requestId: request.ctx.requestId } });
        await recordChange(tx, request.ctx, { resourceType: "topology_sync_request", resourceId: created.id, siteId, verb: "created", before: null, after: present(created), action: "site.topology_sync", feed: false });
        return created;
      });
      reply.code(202).header("location", `/api/v1/sites/${siteId}/topology-sync/`);
      return present(row);
    },
  );
  r.get(
    "/api/v1/sites/:id/topology-sync",
    { config: { scope: "fleet.read" }, schema: { tags, summary: "List a site's topology sync requests", params: IdParams, querystring: TopologySyncListQuerySchema, response: { 200: TopologySyncListSchema, ...errorResponses(400, 401, 403, 404) } } },
    async (request) => {
      const siteId = request.params.id;
      if (!(await prisma.site.findUnique({ where: { id: siteId }, select: { id: true } }))) throw new NotFound("site_not_found", `No site with id ${siteId}`);
      const q = request.query;
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.topologySyncRequest.findMany({ where: { siteId, ...(afterId ? { id: { gt: afterId } } : {}) }, orderBy: { id: "asc" }, take: q.limit + 1 }),
        prisma.topologySyncRequest.count({ where: { siteId } }),
      ]);
      return keysetPage(rows, count, q.limit, present);
    },
  );
}
