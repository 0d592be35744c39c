import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { errorResponses } from "../../lib/openapi.ts";
import type { HealthService } from "./service.ts";

const Status = z.object({ status: z.literal("ok") });

/** /healthz: the process serves. /readyz: it can do useful work (database reachable). */
export function registerHealth(app: FastifyInstance, { service }: { service: HealthService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/healthz",
    { schema: { tags: ["operations"], operationId: "getLiveness", summary: "Liveness", response: { 200: Status } } },
    async () => ({
      status: "ok" as const,
    }),
  );
  r.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        operationId: "getReadiness",
        summary: "Readiness: 503 while the database is unreachable or the hub is shutting down",
        response: { 200: Status, ...errorResponses(503) },
      },
    },
    async (request) => service.readiness(request.log),
  );
}
