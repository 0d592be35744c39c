/**
 * The connector's own migrations (./migrations/NNN_name.sql), applied at start, each in its
 * own transaction, under an advisory lock so instances starting together on one database
 * apply each once.
 */
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type pg from "pg";

/** Beside this module (and beside the bundle in dist/, where the build copies them). */
export const CONNECTOR_MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
/** Any constant distinct from the hub's locks; the connector's database is its own anyway. */
const MIGRATION_LOCK = 0x636f6e6e;

export async function migrate(client: pg.ClientBase): Promise<string[]> {
  const files = (await readdir(CONNECTOR_MIGRATIONS_DIR)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS connector_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      (await client.query<{ name: string }>("SELECT name FROM connector_migrations")).rows.map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(CONNECTOR_MIGRATIONS_DIR + file, "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query("INSERT INTO connector_migrations (name) VALUES ($1)", [file]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      }
      applied.push(file);
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
  }
  return applied;
}
