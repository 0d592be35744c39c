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
