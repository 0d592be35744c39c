import type { AuditEntry, AuditList, AuditListQuery, FieldDiff } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { keysetList } from "../../lib/paging.ts";
import type { AuditRepo, AuditRow } from "./repo.ts";

export function toAuditEntry(row: AuditRow): AuditEntry {
  return { ...row, diff: row.diff as FieldDiff, createdAt: row.createdAt.toISOString() };
}

/** The audit log, read-only: services write it through the change recorder. */
export function createAuditService({ prisma, repo }: { prisma: PrismaClient; repo: AuditRepo }) {
  return {
    async list(query: AuditListQuery): Promise<AuditList> {
      const { limit: _limit, cursor: _cursor, ...filter } = query;
      return keysetList(query, (page) => repo.list(prisma, filter, page), toAuditEntry);
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;
