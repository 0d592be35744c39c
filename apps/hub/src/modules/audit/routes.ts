import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { AuditListQuerySchema, AuditListSchema, decodeCursor, encodeCursor, type FieldDiff } from "@fm/domain";
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
      const more = rows.length > q.limit;
      const items = (more ? rows.slice(0, q.limit) : rows).map((r) => ({ ...r, diff: r.diff as FieldDiff, createdAt: r.createdAt.toISOString() }));
      return { items, count, nextCursor: more ? encodeCursor(items[items.length - 1]!.id) : null };
    },
  );
}
