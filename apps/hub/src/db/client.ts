import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";

export type { Prisma } from "../generated/prisma/client.ts";
export { PrismaClient };

/** The client or an interactive transaction: repo methods accept either. */
export type Db = PrismaClient | Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  poolMax: number;
  /** Fail a connection attempt after this long, so a dead database answers quickly. */
  connectTimeoutMs?: number;
  applicationName?: string;
}

/**
 * Every open connection of every pool this process made, by its PostgreSQL backend process id:
 * how `transactionConnection` finds the connection a Prisma transaction runs on.
 */
const connectionsByPid = new Map<number, pg.PoolClient>();
const PID = (c: pg.PoolClient) => (c as unknown as { processID: number | null }).processID;

/**
 * Each connection's current checkout from its pool (from `acquire` to `release`): a transaction
 * holds one checkout for its whole life (Prisma's pg adapter connects at BEGIN and releases at
 * COMMIT or ROLLBACK), so a connection found for a transaction is still that transaction's while
 * the checkout it was found in lasts.
 */
const checkouts = new WeakMap<pg.PoolClient, object>();
/** The connection found for a transaction object, and the checkout it was found in. */
const foundFor = new WeakMap<object, { client: pg.PoolClient; checkout: object }>();

function trackConnections(pool: pg.Pool): void {
  pool.on("acquire", (client) => checkouts.set(client, {}));
  pool.on("release", (_err, client) => checkouts.delete(client));
  pool.on("connect", (client) => {
    const pid = PID(client);
    if (pid) connectionsByPid.set(pid, client);
  });
  pool.on("remove", (client) => {
    const pid = PID(client);
    if (pid && connectionsByPid.get(pid) === client) connectionsByPid.delete(pid);
  });
}

/**
 * The pg connection an interactive transaction runs on, to send it a statement with a large
 * parameter directly. Prisma serialises every raw parameter to JSON and parses it back before
 * the driver sees it: for the multi-megabyte JSON documents a first load's bulk statements
 * carry, that costs more than PostgreSQL's work. Undefined outside a transaction (the client
 * itself: any pooled connection would do, but not inside someone else's transaction) or when
 * the connection is not one of this process's pools (then the caller goes through Prisma).
 * Found with two short queries the first time, then remembered for the transaction object for
 * as long as the connection stays in the checkout it was found in: once the transaction ends its
 * connection goes back to the pool, and the object is asked again (and Prisma refuses it). The
 * caller awaits each statement before its next use of the transaction, so the two never
 * interleave on the connection; an error aborts the transaction as any statement's would.
 */
export async function transactionConnection(db: Db): Promise<pg.PoolClient | undefined> {
  // An interactive transaction's client is the root client without $connect, $disconnect, $on
  // and $extends (Prisma's "itx" deny list).
  if (typeof (db as { $connect?: unknown }).$connect === "function") return undefined;
  const known = foundFor.get(db);
  if (known && checkouts.get(known.client) === known.checkout && idleInTransaction(known.client)) return known.client;
  // A value only this transaction can see (set_config local to it): the candidate connection is
  // the transaction's own if it reads the value back. A pid is unique within one server only, so
  // a connection of this process to another server with the same pid reads nothing.
  const probe = randomUUID();
  const [row] = await db.$queryRaw<{ pid: number }[]>`
    SELECT pg_backend_pid() AS pid, set_config('fleet_manager.transaction_probe', ${probe}, true) AS probe`;
  const client = connectionsByPid.get(row!.pid);
  if (!client) return undefined;
  const seen = await client.query<{ probe: string | null }>(
    "SELECT current_setting('fleet_manager.transaction_probe', true) AS probe",
  );
  if (seen.rows[0]?.probe !== probe) return undefined;
  const checkout = checkouts.get(client);
  if (checkout) foundFor.set(db, { client, checkout });
  return client;
}

/**
 * A plain statement on the transaction's own connection (see `transactionConnection`), else
 * through Prisma: for a statement that reads thousands of rows (a site's devices for a
 * reflection) or takes thousands of values (its ids to stamp), Prisma's serialisation and row
 * building cost as much as PostgreSQL's work, pg's about half. The rows' values are pg's: bigint
 * and numeric come back as strings on the direct path, so read text, uuid, integer, boolean,
 * timestamp, array and json columns only.
 */
export async function directQuery<T>(db: Db, sql: string, ...params: unknown[]): Promise<{ rows: T[]; count: number }> {
  return directStatement<T>(db, undefined, sql, params);
}

/**
 * directQuery as a named (prepared) statement: planned once per connection, for a statement a
 * reflection runs on every push whose planning costs a measurable part of its run (the full
 * rows' joins). `name` must stand for this very text.
 */
export async function directPrepared<T>(
  db: Db,
  name: string,
  sql: string,
  ...params: unknown[]
): Promise<{ rows: T[]; count: number }> {
  return directStatement<T>(db, name, sql, params);
}

async function directStatement<T>(
  db: Db,
  name: string | undefined,
  sql: string,
  params: unknown[],
): Promise<{ rows: T[]; count: number }> {
  const direct = await transactionConnection(db);
  if (!direct) return prismaQuery<T>(db, sql, ...params);
  checkStillInTransaction(db, direct);
  const r = name ? await direct.query({ name, text: sql, values: params }) : await direct.query(sql, params);
  return { rows: r.rows as T[], count: r.rowCount ?? 0 };
}

/**
 * `COPY … FROM STDIN` of `chunks` (COPY text: lines of tab-separated fields) on the transaction's
 * own connection (see `transactionConnection`): the rows it wrote, or undefined when there is no
 * such connection (outside a transaction, or a connection this process does not know), and
 * nothing was sent. An error (a constraint, a malformed field) rejects and aborts the transaction.
 */
export async function directCopy(db: Db, sql: string, chunks: Iterable<string>): Promise<number | undefined> {
  if (!/^COPY [a-z_][a-z0-9_]* \([a-z0-9_, ]+\) FROM STDIN$/.test(sql))
    throw new Error(`directCopy: not a COPY … FROM STDIN: ${sql}`);
  const direct = await transactionConnection(db);
  if (!direct) return undefined;
  checkStillInTransaction(db, direct);
  const copy = direct.query(copyFrom(sql));
  await pipeline(Readable.from(chunks), copy);
  return copy.rowCount;
}

/**
 * Throws unless the transaction's connection is idle inside it. Called in the tick the
 * statement is queued, with nothing awaited in between: when Prisma ends a transaction (its
 * timeout, a rollback) it queues ROLLBACK on this connection before releasing it, and a
 * statement queued behind that ROLLBACK would run outside any transaction and commit on its own.
 */
function checkStillInTransaction(db: Db, direct: pg.PoolClient): void {
  if (idleInTransaction(direct)) return;
  foundFor.delete(db);
  throw new Error("the transaction's connection is no longer idle inside it (the transaction is ending)");
}

/**
 * pg's connection is idle inside a transaction block: nothing running or queued on it, and
 * PostgreSQL's last ReadyForQuery said "in a transaction" ('T'). pg keeps these as internals
 * (pg 8.x); bulk.int.test.ts fails if they stop meaning this.
 */
function idleInTransaction(client: pg.PoolClient): boolean {
  const c = client as unknown as { readyForQuery: boolean; _queryQueue: unknown[]; _txStatus: string | null };
  return c.readyForQuery && c._queryQueue.length === 0 && c._txStatus === "T";
}

/**
 * A plain statement through Prisma: its rows (a SELECT, or RETURNING) and the rows it wrote. The
 * statement says which it is by its first word; any other first word is refused rather than guessed.
 */
export async function prismaQuery<T>(db: Db, sql: string, ...params: unknown[]): Promise<{ rows: T[]; count: number }> {
  const kind = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  if (kind !== "SELECT" && kind !== "INSERT" && kind !== "UPDATE" && kind !== "DELETE")
    throw new Error(
      `prismaQuery: a statement starting with SELECT, INSERT, UPDATE or DELETE, not ${kind ?? "nothing"}`,
    );
  if (kind === "SELECT" || /\bRETURNING\b/i.test(sql)) {
    const rows = await db.$queryRawUnsafe<T[]>(sql, ...params);
    return { rows, count: rows.length };
  }
  return { rows: [], count: await db.$executeRawUnsafe(sql, ...params) };
}

/**
 * A read through `pool` as a named (prepared) statement when the hub has its pool: planned
 * once per connection (a device list's or feed page's statement costs more to plan than to run),
 * and without Prisma's mapping of every value of a raw result (a feed page's 2.7 MB of text). Through Prisma otherwise.
 */
export async function pooledRead<R>(db: Db, pool: pg.Pool | undefined, name: string, text: string, values: unknown[]) {
  if (pool) return (await pool.query<R & pg.QueryResultRow>({ name, text, values })).rows as R[];
  return (await prismaQuery<R>(db, text, ...values)).rows;
}

export function createDatabase(connectionString: string, opts: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString,
    max: opts.poolMax,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? "fleet-manager-hub",
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next query opens a fresh one.
  pool.on("error", () => {});
  trackConnections(pool);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}
