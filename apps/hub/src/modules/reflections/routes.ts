import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { ReflectionBodySchema, ReflectionParams, ReflectionResultSchema } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { ReflectionService } from "./service.ts";

export const REFLECTION_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

export function registerReflections(app: FastifyInstance, { service }: { service: ReflectionService }): void {
  app.withTypeProvider<ZodTypeProvider>().put(
    "/api/v1/sites/:site_id/reflections/:source",
    {
      // A site's whole view may take FM_REFLECTION_REQUEST_TIMEOUT_S to arrive over a satellite's
      // uplink (plugins/slow-clients.ts), not the FM_REQUEST_TIMEOUT_S of every other body.
      config: { scope: "agent", slowBody: true },
      // A site's whole view: 50,000 Ironic nodes are ~16 MB of JSON, above the default limit.
      bodyLimit: REFLECTION_BODY_LIMIT_BYTES,
      schema: {
        tags: ["reflections"],
        operationId: "pushReflection",
        summary: "A source's complete observed state for a site (its agent only: own satellite's sites, own source)",
        params: ReflectionParams,
        body: ReflectionBodySchema,
        response: { 200: ReflectionResultSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => service.apply(request.ctx, request.params.site_id, request.params.source, request.body),
  );
}
