import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  IdParams,
  TopologySyncCreateSchema,
  TopologySyncListQuerySchema,
  TopologySyncListSchema,
  TopologySyncRequestSchema,
} from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { TopologyService } from "./service.ts";

export function registerTopology(app: FastifyInstance, { service }: { service: TopologyService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["sites"];
  r.post(
    "/api/v1/sites/:id/topology-sync",
    {
      config: { scope: "fleet.operate", idempotent: true },
      schema: {
        tags,
        operationId: "requestTopologySync",
        summary: "Request a topology sync for a site",
        params: IdParams,
        body: TopologySyncCreateSchema.nullish(),
        response: { 202: TopologySyncRequestSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const created = await service.request(request.ctx, request.params.id, request.body?.reason ?? null);
      reply.code(202).header("location", `/api/v1/sites/${request.params.id}/topology-sync/`);
      return created;
    },
  );
  r.get(
    "/api/v1/sites/:id/topology-sync",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listTopologySyncs",
        summary: "List a site's topology sync requests",
        params: IdParams,
        querystring: TopologySyncListQuerySchema,
        response: { 200: TopologySyncListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.list(request.params.id, request.query),
  );
}
