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
 * contiguous. The hub runs the sequencer whenever a writer commits (NOTIFY from a trigger), and a
 * reader whose page finds committed events still unpositioned runs it and reads again, so
 * positions appear within milliseconds and a reader sees every change committed before it asked.
 *
 * Retention: the purge deletes a prefix of positions (never a hole) and, in the same
 * transaction, raises `inventory_feed_state.purged_through` to the last position it deleted.
 * The sequencer continues above max(position, purged_through), so positions are never reused
 * even when every event was purged. A reader reads `purged_through` in its page's own statement
 * (one snapshot): if its cursor is at or above it there, nothing after the cursor had been purged
 * from what the page read.
 */
import type pg from "pg";
import { pooledRead, type Db, type PrismaClient } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";

/** Advisory-lock key of the feed sequencer (ASCII "fmfeedsq"). */
export const SEQUENCER_LOCK_KEY = "7380946367040729457";

/** The highest position given so far: purged events' positions count too. */
const HEAD_SQL = Prisma.sql`greatest((SELECT max(position) FROM inventory_events), (SELECT purged_through FROM inventory_feed_state WHERE id = 1), 0)`;

/**
 * The sequencer's statement, shared with the snapshot (which positions inside its own
 * transaction, see snapshot.ts). The caller holds SEQUENCER_LOCK_KEY.
 */
export const SEQUENCE_SQL = Prisma.sql`
  WITH top AS (SELECT ${HEAD_SQL} AS p),
       todo AS (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM inventory_events WHERE position IS NULL)
  UPDATE inventory_events e SET position = top.p + todo.n
    FROM todo, top
   WHERE e.seq = todo.seq`;
export const HEAD_QUERY = Prisma.sql`SELECT (${HEAD_SQL})::text AS head`;

/** inventory_feed_state's purged_through (0: nothing purged yet). */
const PURGED_SQL = `coalesce((SELECT purged_through FROM inventory_feed_state WHERE id = 1), 0)`;
/** An event as the feed represents it (toInventoryEvent), as compact JSON text. */
const EVENT_JSON = `(SELECT row_to_json(o) FROM (SELECT e.position::text AS "position", e.type, e.resource_type AS "resourceType",
         e.resource_id AS "resourceId", e.site_id AS "siteId", e.data, e.request_id AS "requestId",
         to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt") o)::text`;
/**
 * readPageJson's statement: $1 after, $2 limit (, $3 site ids). One row per event in position
 * order, each with the page's head, purged_through and `pending` (the sequencer's pre-check, asked
 * in the same statement so that a page costs one round trip when nothing waits); one row without
 * an event when the page is empty. The events' texts are joined by the hub: string_agg of a
 * page's 2.7 MB in PostgreSQL took twice as long as sending its rows (20 against 11 ms a page).
 */
const pageSql = (siteFilter: string) => `
  SELECT m.head, m.purged, m.pending, p.position::text AS position, p.j
    FROM (SELECT (${HEAD_SQL.text})::text AS head, (${PURGED_SQL})::text AS purged,
                 EXISTS (SELECT 1 FROM inventory_events WHERE position IS NULL) AS pending) m
    LEFT JOIN LATERAL (
         SELECT e.position, ${EVENT_JSON} AS j FROM inventory_events e
          WHERE e.position > $1::bigint${siteFilter}
          ORDER BY e.position LIMIT $2) p ON true
   ORDER BY p.position`;
const PAGE_SQL = pageSql("");
const PAGE_OF_SITES_SQL = pageSql(" AND (e.site_id = ANY($3::uuid[]) OR e.site_id IS NULL)");
interface FeedPageRow {
  head: string;
  purged: string;
  pending: boolean;
  position: string | null;
  j: string | null;
}

export const feedRepo = {
  /**
   * Gives positions to committed, unpositioned events. Returns how many it positioned. With
   * `pending`, the caller has just seen that some wait (a page's statement says so): the
   * pre-check, which spares the lock's transaction when there are none, is skipped.
   */
  async sequence(prisma: PrismaClient, opts: { pending?: boolean } = {}): Promise<number> {
    if (!opts.pending) {
      const pending = await prisma.$queryRaw<
        { any: boolean }[]
      >`SELECT EXISTS (SELECT 1 FROM inventory_events WHERE position IS NULL) AS any`;
      if (!pending[0]?.any) return 0;
    }
    return prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK_KEY}::bigint)`;
      return tx.$executeRaw(SEQUENCE_SQL);
    });
  },

  /**
   * Refreshes the planner's statistics of the event table. Taken while a bulk write's events
   * were still unpositioned (a first load, the demo seed, a restore), they say most events have
   * no position: PostgreSQL then plans "is any event unpositioned?" and the sequencer's own
   * search as a scan of every event (284 ms a page at 200,000) instead of the partial index of
   * the unpositioned ones, which is empty. Autovacuum gets there eventually; the sequencer calls
   * this after positioning a large batch.
   */
  async analyze(db: Db): Promise<void> {
    await db.$executeRawUnsafe("ANALYZE inventory_events");
  },

  /** The highest position given so far (0: none yet). */
  async head(db: Db): Promise<bigint> {
    const rows = await db.$queryRaw<{ head: string }[]>(HEAD_QUERY);
    return BigInt(rows[0]!.head);
  },

  /**
   * A page of the feed as the reader gets it, in one statement (one snapshot): the events after
   * `after` in position order (with `siteIds`, only those sites' events and events of no site:
   * roles, types, settings), each as its JSON text, joined, with the head, `purged_through` and
   * whether committed events still wait for a position, all as of that snapshot.
   *
   * One snapshot is what the three separate reads only approximated: every position up to the
   * head is given in it (the sequencer gives contiguous positions in one transaction), so the
   * page is final up to the head; and its `purged_through` is the one that applies to this very
   * page. The JSON is PostgreSQL's (row_to_json is compact, `data` is `json` and is copied as
   * it was written, JSON.stringify's text): the bytes JSON.stringify(toInventoryEvent(row))
   * writes, without a row object, a Date or a re-serialisation per event in the hub (a test
   * holds the two together).
   */
  async readPageJson(db: Db, pool: pg.Pool | undefined, after: bigint, limit: number, siteIds?: string[]) {
    const rows = siteIds
      ? await pooledRead<FeedPageRow>(db, pool, "feed-page-sites", PAGE_OF_SITES_SQL, [
          after.toString(),
          limit,
          siteIds,
        ])
      : await pooledRead<FeedPageRow>(db, pool, "feed-page", PAGE_SQL, [after.toString(), limit]);
    const meta = rows[0]!;
    const events = meta.j === null ? [] : rows;
    return {
      head: BigInt(meta.head),
      purgedThrough: BigInt(meta.purged),
      pending: meta.pending,
      count: events.length,
      last: events.length ? BigInt(events[events.length - 1]!.position!) : undefined,
      itemsJson: events.map((r) => r.j).join(","),
    };
  },

  /**
   * Deletes up to `batch` of the oldest events that occurred before `cutoff`, as a prefix of
   * positions: it stops at the first event that is still young, even if older ones follow it (a
   * long transaction's event can get its position after younger ones). Returns how many it
   * deleted and the new purged_through. Replicas purging at once queue on the state row.
   */
  async purgeBatch(
    prisma: PrismaClient,
    cutoff: Date,
    batch: number,
  ): Promise<{ deleted: number; purgedThrough: bigint }> {
    return prisma.$transaction(async (tx) => {
      const [state] = await tx.$queryRaw<{ p: bigint }[]>`
        SELECT purged_through AS p FROM inventory_feed_state WHERE id = 1 FOR UPDATE`;
      // Without its row, a purge could not record what it deleted: readers would skip silently.
      if (!state) throw new Error("inventory_feed_state has no row: the feed retention migration is incomplete");
      const from = state.p;
      const deleted = await tx.$queryRaw<{ last: bigint | null; n: bigint }[]>`
        WITH win AS (
               SELECT position, occurred_at FROM inventory_events
                WHERE position > ${from} ORDER BY position LIMIT ${batch}),
             stop AS (SELECT min(position) AS s FROM win WHERE occurred_at >= ${cutoff}),
             gone AS (
               DELETE FROM inventory_events e USING win w
                WHERE e.position = w.position AND w.position < coalesce((SELECT s FROM stop), 9223372036854775807)
               RETURNING e.position)
        SELECT max(position) AS last, count(*) AS n FROM gone`;
      const last = deleted[0]?.last ?? null;
      if (last === null) return { deleted: 0, purgedThrough: from };
      await tx.$executeRaw`
        UPDATE inventory_feed_state SET purged_through = ${last}, purged_at = now() WHERE id = 1`;
      return { deleted: Number(deleted[0]!.n), purgedThrough: last };
    });
  },

  /**
   * Runs `read` in a REPEATABLE READ, READ ONLY transaction whose data is exactly the feed up to
   * the position it is given. See the design note in snapshot.ts for why this is exact.
   */
  async inSnapshot<T>(
    pool: pg.Pool,
    prisma: PrismaClient,
    read: (tx: Db, position: bigint) => Promise<T>,
    timeoutMs: number,
  ): Promise<T> {
    const snapshotId = deferred<string | undefined>();
    const began = deferred<void>();
    const imported = deferred<void>();
    const committed = deferred<boolean>();
    let position = 0n;
    // The reading transaction holds its connection before the sequencer's lock is taken, so a
    // pool full of readers waiting on that lock cannot keep it from starting.
    const reading = prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
        began.resolve();
        const id = await snapshotId.promise;
        if (!id) throw new Error("the snapshot's position could not be taken");
        await tx.$executeRawUnsafe(`SET TRANSACTION SNAPSHOT '${id}'`);
        imported.resolve();
        // The positions this snapshot reflects must be committed before a reader can use them.
        if (!(await committed.promise)) throw new Error("the snapshot's positions could not be committed");
        return read(tx, position);
      },
      { isolationLevel: "RepeatableRead", timeout: timeoutMs, maxWait: 10_000 },
    );
    reading.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    const readingFailed = reading.then(
      () => false,
      () => false,
    );
    if (!(await Promise.race([began.promise.then(() => true), readingFailed]))) return reading;

    let positioner: pg.PoolClient | undefined;
    let broken: Error | undefined;
    try {
      positioner = await pool.connect();
      await positioner.query("SELECT pg_advisory_lock($1::bigint)", [SEQUENCER_LOCK_KEY]);
      try {
        await positioner.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
        await positioner.query(SEQUENCE_SQL.text, SEQUENCE_SQL.values);
        const head = await positioner.query<{ head: string }>(HEAD_QUERY.text, HEAD_QUERY.values);
        position = BigInt(head.rows[0]!.head);
        const exported = await positioner.query<{ id: string }>("SELECT pg_export_snapshot() AS id");
        const id = exported.rows[0]!.id;
        snapshotId.resolve(/^[0-9A-F-]+$/i.test(id) ? id : undefined);
        const ok = await Promise.race([imported.promise.then(() => true), readingFailed]);
        await positioner.query(ok ? "COMMIT" : "ROLLBACK");
        committed.resolve(ok);
      } finally {
        await positioner.query("SELECT pg_advisory_unlock($1::bigint)", [SEQUENCER_LOCK_KEY]);
      }
    } catch (err) {
      // A connection whose state is unknown (a lock or a transaction maybe still held) is closed.
      broken = err as Error;
      snapshotId.resolve(undefined);
      committed.resolve(false);
      throw err;
    } finally {
      positioner?.release(broken);
    }
    return reading;
  },

  /** Sites deleted while having one of these slugs (the feed keeps their deletions), by slug. */
  async deletedSites(db: Db, slugs: string[]): Promise<{ id: string; slug: string }[]> {
    return db.$queryRaw<{ id: string; slug: string }[]>`
      SELECT DISTINCT resource_id AS id, data->>'slug' AS slug FROM inventory_events
       WHERE type = 'site.deleted' AND data->>'slug' = ANY(${slugs}::text[])`;
  },

  /** The next `limit` device ids after `afterId` at these sites (all sites: undefined), in id order. */
  async deviceIdsAfter(db: Db, siteIds: string[] | undefined, afterId: string | undefined, limit: number) {
    const rows = await db.device.findMany({
      where: { ...(siteIds ? { siteId: { in: siteIds } } : {}), ...(afterId ? { id: { gt: afterId } } : {}) },
      select: { id: true },
      orderBy: { id: "asc" },
      take: limit,
    });
    return rows.map((r) => r.id);
  },

  /** Head and the oldest position still kept, for the metrics. */
  async bounds(db: Db): Promise<{ head: bigint; oldest: bigint | null }> {
    const rows = await db.$queryRaw<{ head: string; oldest: bigint | null }[]>`
      SELECT (${HEAD_SQL})::text AS head, (SELECT min(position) FROM inventory_events) AS oldest`;
    return { head: BigInt(rows[0]!.head), oldest: rows[0]!.oldest };
  },
};
export type FeedRepo = typeof feedRepo;

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
