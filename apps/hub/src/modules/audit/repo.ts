import type { FieldDiff } from "@fm/domain";
import type { AuditListQuery } from "@fm/domain";
import { bulkInsert } from "../../db/bulk.ts";
import type { Db } from "../../db/client.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";
import type { Prisma } from "../../generated/prisma/client.ts";

export type AuditRow = Prisma.AuditLogGetPayload<object>;
export type AuditFilter = Omit<AuditListQuery, "limit" | "cursor">;

export interface NewAuditEntry {
  principal: string;
  action: string;
  resourceType: string;
  resourceId: string;
  diff: FieldDiff;
  requestId: string | null;
}

function where(q: AuditFilter): Prisma.AuditLogWhereInput {
  const w: Prisma.AuditLogWhereInput = {};
  if (q.principal) w.principal = q.principal;
  if (q.action) w.action = q.action;
  if (q.resourceType) w.resourceType = q.resourceType;
  if (q.resourceId) w.resourceId = q.resourceId;
  if (q.requestId) w.requestId = q.requestId;
  if (q.since || q.until)
    w.createdAt = { ...(q.since ? { gte: new Date(q.since) } : {}), ...(q.until ? { lt: new Date(q.until) } : {}) };
  return w;
}

export const auditRepo = {
  async append(db: Db, entry: NewAuditEntry): Promise<void> {
    await db.auditLog.create({ data: { ...entry, diff: entry.diff as Prisma.InputJsonValue } });
  },
  async appendMany(db: Db, entries: NewAuditEntry[]): Promise<void> {
    await bulkInsert(
      db,
      "audit_log",
      [
        { name: "principal", type: "varchar" },
        { name: "action", type: "varchar" },
        { name: "resource_type", type: "varchar" },
        { name: "resource_id", type: "varchar" },
        { name: "diff", type: "json" },
        { name: "request_id", type: "varchar" },
      ],
      entries.map((e) => ({
        principal: e.principal,
        action: e.action,
        resource_type: e.resourceType,
        resource_id: e.resourceId,
        diff: e.diff,
        request_id: e.requestId ?? null,
      })),
    );
  },
  async list(db: Db, filter: AuditFilter, page: PageRequest): Promise<RowPage<AuditRow>> {
    return keysetRows(db.auditLog, where(filter), page);
  },
};
export type AuditRepo = typeof auditRepo;
