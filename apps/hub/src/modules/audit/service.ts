import { auditPrincipal } from "@fm/domain";
import type { AuditEntry, AuditList, AuditListQuery, FieldDiff } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { keysetList } from "../../lib/paging.ts";
import type { AuditNames, AuditRepo, AuditRow } from "./repo.ts";

/** A row as the API shows it, its principal and resource named from `names` (the ids kept beside). */
export function toAuditEntry(row: AuditRow, names: AuditNames): AuditEntry {
  const principal = auditPrincipal(row.principal, names.clients.get(row.principal));
  return {
    ...row,
    principalKind: principal.kind,
    principalName: principal.name,
    resourceName: names.resources.get(`${row.resourceType} ${row.resourceId}`) ?? null,
    diff: row.diff as FieldDiff,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The audit log, read-only: services write it through the change recorder. */
export function createAuditService({ prisma, repo }: { prisma: PrismaClient; repo: AuditRepo }) {
  return {
    async list(query: AuditListQuery): Promise<AuditList> {
      const { limit: _limit, cursor: _cursor, ...filter } = query;
      const page = await keysetList(
        query,
        (p) => repo.list(prisma, filter, p),
        (row) => row,
      );
      const names = await repo.names(prisma, page.items);
      return { ...page, items: page.items.map((row) => toAuditEntry(row, names)) };
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;
