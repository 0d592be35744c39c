import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";

export type TopologySyncRequestRow = Prisma.TopologySyncRequestGetPayload<object>;

export const topologyRepo = {
  async create(
    db: Db,
    data: { siteId: string; region: string; reason: string | null; requestedBy: string; requestId: string },
  ): Promise<TopologySyncRequestRow> {
    return db.topologySyncRequest.create({ data });
  },

  async findByRequestId(db: Db, siteId: string, requestId: string): Promise<TopologySyncRequestRow | null> {
    return db.topologySyncRequest.findFirst({ where: { siteId, requestId } });
  },

  async list(db: Db, siteId: string, page: PageRequest): Promise<RowPage<TopologySyncRequestRow>> {
    return keysetRows(db.topologySyncRequest, { siteId }, page);
  },
};
export type TopologyRepo = typeof topologyRepo;
