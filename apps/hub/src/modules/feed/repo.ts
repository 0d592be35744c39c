/**
 * The inventory change feed: a transactional outbox with a sequencer.
 *
 * The problem: writers insert events inside their own transactions. An identity column gives
 * each event a number at INSERT time, but transactions commit in any order, so a reader that
 * pages by that number can see event 12 (committed) before event 11 (still in flight) and,
 * having moved its cursor past 12, never see 11.
 *
 * The solution: the number readers page by (`position`) is not assigned at insert time but by
 * a sequencer, after commit. The sequencer
 *   1. takes a transaction-scoped advisory lock, so exactly one sequencer runs at a time
 *      across every hub replica;
 *   2. in a new statement (so its snapshot includes everything the previous sequencer
 *      committed before releasing the lock), reads the highest position given so far and
 *      gives the events that are committed but unpositioned the next positions, in insertion
 *      order (`seq`), so events of one transaction stay in their order.
 * An event becomes visible to the sequencer only once its transaction has committed, and
 * every position it gives is greater than every position given before, so a reader that has
 * seen position P can only ever find new events above P: nothing is skipped, and positions are
 * contiguous. Readers run the sequencer before reading, and the hub runs it whenever a writer
 * commits (NOTIFY from a trigger), so positions appear within milliseconds.
 */
import type { InventoryEvent } from "@fm/domain";
import { bulkInsert } from "../../db/bulk.ts";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";

/** Advisory-lock key of the feed sequencer (ASCII "fmfeedsq"). */
const SEQUENCER_LOCK_KEY = "7380946367040729457";

/** An event to append: its data is exactly its type's (packages/domain feed.ts). */
export type NewInventoryEvent = InventoryEvent extends infer E
  ? E extends InventoryEvent
    ? Omit<E, "position" | "occurredAt">
    : never
  : never;

export type StoredInventoryEvent = Omit<Prisma.InventoryEventGetPayload<object>, "position"> & { position: bigint };

export const feedRepo = {
  /** Appends events inside the caller's transaction: they commit, or vanish, with the change. */
  async append(db: Db, events: NewInventoryEvent[]): Promise<void> {
    await bulkInsert(
      db,
      "inventory_events",
      [
        { name: "type", type: "varchar" },
        { name: "resource_type", type: "varchar" },
        { name: "resource_id", type: "varchar" },
        { name: "site_id", type: "uuid" },
        { name: "data", type: "jsonb" },
        { name: "request_id", type: "varchar" },
      ],
      events.map((e) => ({
        type: e.type,
        resource_type: e.resourceType,
        resource_id: e.resourceId,
        site_id: e.siteId,
        data: e.data,
        request_id: e.requestId,
      })),
    );
  },

  /** Gives positions to committed, unpositioned events. Returns how many it positioned. */
  async sequence(prisma: PrismaClient): Promise<number> {
    const pending = await prisma.$queryRaw<
      { any: boolean }[]
    >`SELECT EXISTS (SELECT 1 FROM inventory_events WHERE position IS NULL) AS any`;
    if (!pending[0]?.any) return 0;
    return prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK_KEY}::bigint)`;
      return tx.$executeRaw`
        WITH top AS (SELECT coalesce(max(position), 0) AS p FROM inventory_events),
             todo AS (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM inventory_events WHERE position IS NULL)
        UPDATE inventory_events e SET position = top.p + todo.n
          FROM todo, top
         WHERE e.seq = todo.seq`;
    });
  },

  async readAfter(db: Db, after: bigint, limit: number): Promise<StoredInventoryEvent[]> {
    const rows = await db.inventoryEvent.findMany({
      where: { position: { gt: after } },
      orderBy: { position: "asc" },
      take: limit,
    });
    return rows.map((r) => ({ ...r, position: r.position! }));
  },
};
export type FeedRepo = typeof feedRepo;
