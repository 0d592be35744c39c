import { keysetPage } from "../../lib/paging.ts";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { AuditListQuerySchema, AuditListSchema, decodeCursor, type FieldDiff } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { errorResponses } from "../../lib/openapi.ts";
import { auditRepo } from "./repo.ts";

export function registerAudit(app: FastifyInstance, { prisma }: { prisma: PrismaClient }): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/api/v1/audit",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["audit"],
        summary: "Audit log: every mutating call with its principal, diff and request id",
        querystring: AuditListQuerySchema,
        response: { 200: AuditListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const [rows, count] = await auditRepo.page(prisma, q, q.cursor ? decodeCursor(q.cursor) : undefined);
      return keysetPage(rows, count, q.limit, (r) => ({
        ...r,
        diff: r.diff as FieldDiff,
        createdAt: r.createdAt.toISOString(),
      }));
    },
  );
}
