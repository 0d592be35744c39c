import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { migrate, MIGRATIONS_DIR } from "../db/migrate.ts";
import {
  DEFAULT_ADMIN_URL,
  adminQuery,
  adminUrl,
  staleTestDatabases,
  templateComment,
  urlFor,
} from "@fm/test-support/postgres";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../db/embedded.ts";

async function reachable(url: string): Promise<boolean> {
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * Tests use the PostgreSQL at TEST_DATABASE_URL (default: the machine's, 127.0.0.1:5432).
 * Where there is none, they bring up the same embedded PostgreSQL the hub uses, in .cache/.
 */
async function ensurePostgres(): Promise<EmbeddedPostgres | undefined> {
  if (await reachable(adminUrl())) return undefined;
  if (process.env.TEST_DATABASE_URL)
    throw new Error(`TEST_DATABASE_URL (${process.env.TEST_DATABASE_URL}) is unreachable`);
  const log = { info: () => {}, warn: console.warn, error: console.error, debug: () => {} };
  const embedded = await startEmbeddedPostgres(".cache/test-postgres", log as never);
  const admin = new URL(embedded.url);
  admin.pathname = "/postgres";
  process.env.TEST_DATABASE_URL = admin.toString(); // inherited by the test workers
  console.warn(`no PostgreSQL at ${DEFAULT_ADMIN_URL}: using an embedded one on port ${embedded.port}`);
  return embedded;
}

/** Migrates a template database once per run (named after the migrations' content). */
export default async function setup(project: TestProject) {
  const embedded = await ensurePostgres();
  const hash = createHash("sha256");
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) hash.update(f).update(readFileSync(join(MIGRATIONS_DIR, f)));
  const name = `fm_template_${hash.digest("hex").slice(0, 12)}`;
  const exists = await adminQuery("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (!exists.rowCount) {
    const building = `${name}_b_${Date.now().toString(36)}_${process.pid}`;
    await adminQuery(`CREATE DATABASE ${building}`);
    await migrate(urlFor(building));
    await adminQuery(`ALTER DATABASE ${building} RENAME TO ${name}`).catch(async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${building}`); // another run built it first
    });
  }
  // Marks the template as in use, so another checkout's run does not take it for a left-over.
  await adminQuery(`COMMENT ON DATABASE ${name} IS '${templateComment(Date.now())}'`);
  const all = await adminQuery(
    "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE 'fm\\_t%'",
  );
  for (const stale of staleTestDatabases(all.rows as { datname: string; comment: string | null }[], name, Date.now())) {
    await adminQuery(`DROP DATABASE IF EXISTS ${stale} WITH (FORCE)`).catch(() => {});
  }
  project.provide("templateDatabase", name);
  return async () => {
    await embedded?.stop();
  };
}
