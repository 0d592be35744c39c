import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { AuditListQuerySchema, AuditListSchema } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { AuditService } from "./service.ts";

export function registerAudit(app: FastifyInstance, { service }: { service: AuditService }): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/api/v1/audit",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["audit"],
        operationId: "listAuditEntries",
        summary: "Audit log: every mutating call with its principal, diff and request id",
        querystring: AuditListQuerySchema,
        response: { 200: AuditListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.list(request.query),
  );
}
