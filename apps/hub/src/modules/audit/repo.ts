import type { AuditListQuery } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";
import type { Prisma } from "../../generated/prisma/client.ts";

export type AuditRow = Prisma.AuditLogGetPayload<object>;
export type AuditFilter = Omit<AuditListQuery, "limit" | "cursor">;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

/** What each resource type's id names, and the name shown for it: one batched query per type on a page. */
const NAMED: Record<string, (db: Db, ids: string[]) => Promise<{ id: string; name: string }[]>> = {
  device: (db, ids) => db.device.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  device_burn_in_override: (db, ids) =>
    db.device.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  job: (db, ids) => db.job.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  site: async (db, ids) =>
    (await db.site.findMany({ where: { id: { in: ids } }, select: { id: true, slug: true } })).map((s) => ({
      id: s.id,
      name: s.slug,
    })),
  satellite: (db, ids) => db.satellite.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  device_role: async (db, ids) =>
    (await db.deviceRole.findMany({ where: { id: { in: ids } }, select: { id: true, slug: true } })).map((r) => ({
      id: r.id,
      name: r.slug,
    })),
  device_type: async (db, ids) =>
    (await db.deviceType.findMany({ where: { id: { in: ids } }, select: { id: true, slug: true } })).map((t) => ({
      id: t.id,
      name: t.slug,
    })),
  oauth_client: async (db, ids) =>
    (await db.oAuthClient.findMany({ where: { clientId: { in: ids } }, select: { clientId: true } })).map((c) => ({
      id: c.clientId,
      name: c.clientId,
    })),
};

/** Names of a page's resources and principals: `${resourceType} ${resourceId}` -> name, client id -> kind. */
export interface AuditNames {
  resources: Map<string, string>;
  clients: Map<string, { kind: string }>;
}

export const auditRepo = {
  async list(db: Db, filter: AuditFilter, page: PageRequest): Promise<RowPage<AuditRow>> {
    return keysetRows(db.auditLog, where(filter), page);
  },

  /**
   * The names the rows refer to, as they are now: one query per resource type present and one
   * for the clients among the principals, whatever the page's length (never one per row).
   */
  async names(db: Db, rows: readonly AuditRow[]): Promise<AuditNames> {
    const byType = new Map<string, Set<string>>();
    for (const r of rows)
      if (NAMED[r.resourceType] && (r.resourceType === "oauth_client" || UUID.test(r.resourceId)))
        (byType.get(r.resourceType) ?? byType.set(r.resourceType, new Set()).get(r.resourceType)!).add(r.resourceId);
    const clientIds = [...new Set(rows.map((r) => r.principal).filter((p) => !p.startsWith("person:")))];
    const [named, clients] = await Promise.all([
      Promise.all([...byType].map(async ([type, ids]) => ({ type, found: await NAMED[type]!(db, [...ids]) }))),
      clientIds.length
        ? db.oAuthClient.findMany({ where: { clientId: { in: clientIds } }, select: { clientId: true, kind: true } })
        : Promise.resolve([]),
    ]);
    const resources = new Map<string, string>();
    for (const { type, found } of named) for (const f of found) resources.set(`${type} ${f.id}`, f.name);
    return { resources, clients: new Map(clients.map((c) => [c.clientId, { kind: c.kind }])) };
  },
};
export type AuditRepo = typeof auditRepo;
