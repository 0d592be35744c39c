/** The web UI's sessions (table web_sessions), by the SHA-256 of their cookie's value. */
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";

export type WebSessionRow = Prisma.WebSessionGetPayload<object>;

export const webSessionRepo = {
  async create(db: Db, row: Prisma.WebSessionCreateInput): Promise<void> {
    await db.webSession.create({ data: row });
  },

  async find(db: Db, idHash: string): Promise<WebSessionRow | null> {
    return db.webSession.findUnique({ where: { idHash } });
  },

  /** The row, locked until the transaction ends: one renewal of its tokens at a time, across replicas. */
  async findForUpdate(db: Db, idHash: string): Promise<WebSessionRow | null> {
    const rows = await db.$queryRaw<{ id_hash: string }[]>`
      SELECT id_hash FROM web_sessions WHERE id_hash = ${idHash} FOR UPDATE`;
    return rows.length ? db.webSession.findUnique({ where: { idHash } }) : null;
  },

  async renewed(
    db: Db,
    idHash: string,
    data: Pick<WebSessionRow, "principal" | "scopes" | "tokensSealed" | "accessExpiresAt">,
  ): Promise<void> {
    await db.webSession.update({ where: { idHash }, data });
  },

  async touch(db: Db, idHash: string, at: Date): Promise<void> {
    await db.webSession.updateMany({ where: { idHash }, data: { lastSeenAt: at } });
  },

  /** Ends the session; true when there was one. */
  async remove(db: Db, idHash: string): Promise<boolean> {
    return (await db.webSession.deleteMany({ where: { idHash } })).count > 0;
  },

  /** Removes the sessions that have ended by either clock; how many. */
  async sweep(db: PrismaClient, now: Date, idleBefore: Date): Promise<number> {
    return (
      await db.webSession.deleteMany({
        where: { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lte: idleBefore } }] },
      })
    ).count;
  },
};
export type WebSessionRepo = typeof webSessionRepo;
