import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runner } from "node-pg-migrate";
import type { Logger } from "pino";

/**
 * The SQL migrations: beside the built hub (apps/hub/dist/migrations, copied there by
 * `npm run build`, so an image needs no source tree), else the repository's prisma/migrations.
 */
export const MIGRATIONS_DIR = [
  new URL("./migrations", import.meta.url),
  new URL("../../../../prisma/migrations", import.meta.url),
]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(dir))!;
export const MIGRATIONS_TABLE = "pgmigrations";

/**
 * A fixed advisory-lock key for "schema migration of the Fleet Manager hub" (the ASCII
 * of "fmhubmig"). Every hub replica takes it before migrating, so replicas starting
 * together migrate one at a time; the others wait, then find nothing left to do.
 */
const MIGRATION_LOCK_KEY = 0x666d6875626d6967n;

export interface MigrateResult {
  applied: string[];
}

/** Applies every pending migration in prisma/migrations, serialised across processes. */
export async function migrate(databaseUrl: string, log?: Pick<Logger, "info" | "warn">): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "fleet-manager-migrate" });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY.toString()]);
    try {
      const applied = await runner({
        dbClient: client,
        dir: MIGRATIONS_DIR,
        migrationsTable: MIGRATIONS_TABLE,
        direction: "up",
        count: Infinity,
        checkOrder: true,
        // Our own lock above covers this; node-pg-migrate's would be a second, redundant one.
        noLock: true,
        singleTransaction: true,
        log: () => {},
        logger: {
          debug: () => {},
          info: () => {},
          warn: (m: string) => log?.warn(m),
          error: (m: string) => log?.warn(m),
        },
      });
      const names = applied.map((m) => m.name);
      if (names.length > 0) log?.info({ migrations: names }, "applied database migrations");
      return { applied: names };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    await client.end();
  }
}
