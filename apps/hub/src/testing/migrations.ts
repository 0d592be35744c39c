/**
 * A database as it was before one migration, for the tests of what that migration does to rows
 * written before it: `before(file)` makes a fresh database migrated up to (not including)
 * `file`, with a connected client for writing such rows; `migrate()` then applies the rest.
 */
import { readdirSync } from "node:fs";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { createTestDatabase } from "@fm/test-support/postgres";
import { MIGRATIONS_DIR, MIGRATIONS_TABLE, migrate } from "../db/migrate.ts";

export interface DatabaseBefore {
  url: string;
  /** A connection to it (closed by drop). */
  client: pg.Client;
  /** Applies every migration from `file` on. */
  migrate(): Promise<void>;
  drop(): Promise<void>;
}

export async function databaseBefore(file: string): Promise<DatabaseBefore> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const count = files.indexOf(file);
  if (count < 1) throw new Error(`databaseBefore: no migration ${file} after the first`);
  const db = await createTestDatabase();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: MIGRATIONS_TABLE,
      direction: "up",
      count,
      noLock: true,
      log: () => {},
    });
  } catch (err) {
    await client.end();
    await db.drop();
    throw err;
  }
  return {
    url: db.url,
    client,
    migrate: async () => {
      await migrate(db.url);
    },
    drop: async () => {
      await client.end();
      await db.drop();
    },
  };
}
