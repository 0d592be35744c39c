import { randomUUID } from "node:crypto";
import pg from "pg";
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

function trackConnections(pool: pg.Pool): void {
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
 * Asked and checked each time (two short queries), not remembered per transaction object. The caller awaits
 * each statement before its next use of the transaction, so the two never interleave on the
 * connection; an error aborts the transaction as any statement's would.
 */
export async function transactionConnection(db: Db): Promise<pg.PoolClient | undefined> {
  // An interactive transaction's client is the root client without $connect, $disconnect, $on
  // and $extends (Prisma's "itx" deny list).
  if (typeof (db as { $connect?: unknown }).$connect === "function") return undefined;
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
  return seen.rows[0]?.probe === probe ? client : undefined;
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
