/**
 * The durable delivery queue in the connector's own PostgreSQL database: the only code that
 * touches it. The cursor and the records of a feed page (or of a whole snapshot) are written in
 * ONE transaction, and the cursor moves only from the position the page was read after: a
 * SIGKILL at any point leaves either the page and its cursor or neither, so nothing is lost and
 * the cursor never advances twice. Records leave the queue only once the sink acknowledged them
 * (at least once), in `seq` order; a record id repeats across retries so the receiver
 * de-duplicates.
 */
import type pg from "pg";
import type { InventoryRecord } from "@fm/domain";

export interface Enqueue {
  record: InventoryRecord;
  /** `device:<id>` / `site:<id>`: what "in order per resource" is about. */
  resourceKey: string;
}

export interface Queued {
  seq: string;
  recordId: string;
  resourceKey: string;
  attempts: number;
  record: InventoryRecord;
}

export interface CursorState {
  position: string;
  head: string;
  caughtUpAt: Date;
  snapshotPosition: string | null;
  lastErrorClass: string | null;
  lastErrorAt: Date | null;
}

export interface QueueStats {
  undelivered: number;
  /** Seconds since the hub committed the oldest change not yet delivered; 0 when none. */
  oldestUndeliveredAgeS: number;
  deadLetters: number;
}

/** Another writer moved the cursor (a second instance under the same name): stop, do not double-advance. */
export class CursorMoved extends Error {}

/**
 * One statement per page (per CHUNK of a snapshot). The records travel as ONE JSON array text,
 * not as a jsonb[] array literal: pg escapes every quote of every record into the literal and
 * PostgreSQL parses it back, which took half of a 500-record page's commit (32 ms against 17 here).
 */
const INSERT = `
  INSERT INTO connector_queue (connector, record_id, resource_key, position, changed_at, record)
  SELECT $1, r.id, r.key, r.pos, r.at, j.rec::jsonb
    FROM unnest($2::text[], $3::text[], $4::bigint[], $5::timestamptz[]) WITH ORDINALITY AS r(id, key, pos, at, n)
    JOIN json_array_elements($6::json) WITH ORDINALITY AS j(rec, n) USING (n)
   -- seq follows the page's order: that is the delivery order, so the order per device.
   ORDER BY n
  ON CONFLICT (connector, record_id) DO NOTHING`;
/** Rows per INSERT: bounded statements for a 50,000-device snapshot. */
const CHUNK = 1000;

export class QueueStore {
  constructor(
    readonly pool: pg.Pool,
    readonly connector: string,
  ) {}

  async state(): Promise<CursorState | undefined> {
    const { rows } = await this.pool.query<{
      position: string;
      head: string;
      caught_up_at: Date;
      snapshot_position: string | null;
      last_error_class: string | null;
      last_error_at: Date | null;
    }>(
      `SELECT position::text, head::text, caught_up_at, snapshot_position::text, last_error_class, last_error_at
         FROM connector_state WHERE connector = $1`,
      [this.connector],
    );
    const r = rows[0];
    return r
      ? {
          position: r.position,
          head: r.head,
          caughtUpAt: r.caught_up_at,
          snapshotPosition: r.snapshot_position,
          lastErrorClass: r.last_error_class,
          lastErrorAt: r.last_error_at,
        }
      : undefined;
  }

  /** A feed page: its records and the cursor moved from `after` to `nextAfter`, together or not at all. */
  async commitPage(p: { after: string; nextAfter: string; head: string; records: Enqueue[] }): Promise<void> {
    await this.tx(async (c) => {
      await this.insert(c, p.records);
      const caughtUp = BigInt(p.nextAfter) >= BigInt(p.head);
      const res = await c.query(
        `UPDATE connector_state
            SET position = $2::bigint, head = GREATEST($3::bigint, $2::bigint), updated_at = now(),
                caught_up_at = CASE WHEN $4::boolean THEN now() ELSE caught_up_at END
          WHERE connector = $1 AND position = $5::bigint`,
        [this.connector, p.nextAfter, p.head, caughtUp, p.after],
      );
      if (res.rowCount !== 1) throw new CursorMoved(`the cursor of ${this.connector} is no longer at ${p.after}`);
    });
  }

  /** A whole snapshot and the cursor set to its position: a crash midway leaves the previous state. */
  async commitSnapshot(p: { position: string; head: string; records: Enqueue[] }): Promise<void> {
    await this.tx(async (c) => {
      await this.insert(c, p.records);
      await c.query(
        `INSERT INTO connector_state (connector, position, head, caught_up_at, snapshot_position, snapshot_at)
         VALUES ($1, $2::bigint, GREATEST($3::bigint, $2::bigint), now(), $2::bigint, now())
         ON CONFLICT (connector) DO UPDATE
            SET position = EXCLUDED.position, head = EXCLUDED.head, caught_up_at = now(),
                snapshot_position = EXCLUDED.position, snapshot_at = now(), updated_at = now()`,
        [this.connector, p.position, p.head],
      );
    });
  }

  /** The oldest undelivered records, in queue order. */
  async next(limit: number): Promise<Queued[]> {
    const { rows } = await this.pool.query<{
      seq: string;
      record_id: string;
      resource_key: string;
      attempts: number;
      record: InventoryRecord;
    }>(
      `SELECT seq::text, record_id, resource_key, attempts, record FROM connector_queue
        WHERE connector = $1 ORDER BY connector_queue.seq LIMIT $2`, // the column, not the text alias ("10" < "9")
      [this.connector, limit],
    );
    return rows.map((r) => ({
      seq: r.seq,
      recordId: r.record_id,
      resourceKey: r.resource_key,
      attempts: r.attempts,
      record: r.record,
    }));
  }

  async delivered(seqs: string[]): Promise<void> {
    await this.pool.query("DELETE FROM connector_queue WHERE connector = $1 AND seq = ANY($2::bigint[])", [
      this.connector,
      seqs,
    ]);
  }

  async attempted(seqs: string[]): Promise<void> {
    await this.pool.query(
      "UPDATE connector_queue SET attempts = attempts + 1 WHERE connector = $1 AND seq = ANY($2::bigint[])",
      [this.connector, seqs],
    );
  }

  /** Moves a record from the queue to the dead letters, with the sink's reason, in one transaction. */
  async deadLetter(q: Queued, reason: string): Promise<void> {
    await this.tx(async (c) => {
      await c.query(
        `INSERT INTO connector_dead_letters (connector, record_id, resource_key, position, record, reason)
         SELECT connector, record_id, resource_key, position, record, $3 FROM connector_queue
          WHERE connector = $1 AND seq = $2
         ON CONFLICT (connector, record_id) DO UPDATE SET reason = EXCLUDED.reason, dead_at = now()`,
        [this.connector, q.seq, reason.slice(0, 2000)],
      );
      await c.query("DELETE FROM connector_queue WHERE connector = $1 AND seq = $2", [this.connector, q.seq]);
    });
  }

  /** The class of the last failure (null: the last attempt succeeded), for the health check. */
  async recordError(errorClass: string | null): Promise<void> {
    await this.pool.query(
      `UPDATE connector_state SET last_error_class = COALESCE($2::text, last_error_class),
              last_error_at = CASE WHEN $2::text IS NULL THEN last_error_at ELSE now() END
        WHERE connector = $1`,
      [this.connector, errorClass],
    );
  }

  async stats(): Promise<QueueStats> {
    const { rows } = await this.pool.query<{ n: number; age: number | null; dead: number }>(
      `SELECT (SELECT count(*)::int FROM connector_queue WHERE connector = $1) AS n,
              (SELECT extract(epoch FROM now() - min(changed_at))::float8 FROM connector_queue WHERE connector = $1) AS age,
              (SELECT count(*)::int FROM connector_dead_letters WHERE connector = $1) AS dead`,
      [this.connector],
    );
    const r = rows[0]!;
    return { undelivered: r.n, oldestUndeliveredAgeS: Math.max(0, r.age ?? 0), deadLetters: r.dead };
  }

  async deadLetters(limit = 20): Promise<{ recordId: string; resourceKey: string; reason: string; deadAt: Date }[]> {
    const { rows } = await this.pool.query<{ record_id: string; resource_key: string; reason: string; dead_at: Date }>(
      `SELECT record_id, resource_key, reason, dead_at FROM connector_dead_letters
        WHERE connector = $1 ORDER BY id DESC LIMIT $2`,
      [this.connector, limit],
    );
    return rows.map((r) => ({
      recordId: r.record_id,
      resourceKey: r.resource_key,
      reason: r.reason,
      deadAt: r.dead_at,
    }));
  }

  private async insert(c: pg.PoolClient, records: Enqueue[]): Promise<void> {
    for (let i = 0; i < records.length; i += CHUNK) {
      const chunk = records.slice(i, i + CHUNK);
      await c.query(INSERT, [
        this.connector,
        chunk.map((r) => r.record.recordId),
        chunk.map((r) => r.resourceKey),
        chunk.map((r) => r.record.feedPosition),
        chunk.map((r) => r.record.changedAt),
        JSON.stringify(chunk.map((r) => r.record)),
      ]);
    }
  }

  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const out = await fn(c);
      await c.query("COMMIT");
      return out;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }
}

/**
 * One process per connector name: a session advisory lock held for the process's life. A second
 * instance (a rolling update's new pod) waits for it instead of delivering the same queue twice.
 */
export async function holdInstanceLock(
  pool: pg.Pool,
  connector: string,
  signal: AbortSignal,
  onWait: () => void,
): Promise<pg.PoolClient | undefined> {
  const c = await pool.connect();
  let warned = false;
  while (!signal.aborted) {
    const { rows } = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [
      `fm-connector:${connector}`,
    ]);
    if (rows[0]!.ok) return c;
    if (!warned) onWait();
    warned = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
  c.release();
  return undefined;
}
