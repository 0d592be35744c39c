/**
 * Test databases on the real PostgreSQL (TEST_DATABASE_URL, default the local server on
 * 127.0.0.1:5432). The global setup migrates one template database per run; each test file
 * gets its own database cloned from it (CREATE DATABASE … TEMPLATE, a file copy: ~100 ms).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated template database the global setup built for this run. */
    templateDatabase: string;
  }
}

export const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
/** Read on every use: the global setup may point it at an embedded server. */
export const adminUrl = (): string => process.env.TEST_DATABASE_URL ?? DEFAULT_ADMIN_URL;

export function urlFor(database: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${database}`;
  return u.toString();
}

export async function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new database: empty, or a copy of the migrated template when `template` is given. */
export async function createTestDatabase(template?: string): Promise<TestDatabase> {
  const name = `fm_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  return {
    name,
    url: urlFor(name),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Databases older than this are left-overs of an interrupted run (a CI run lasts 90 minutes at most). */
export const STALE_AFTER_MS = 3 * 3600_000;
const TEMPLATE_COMMENT = /^fleet-manager test template; last used (\d+)$/;

export const templateComment = (now: number) => `fleet-manager test template; last used ${now}`;

/**
 * Which of the test databases on the server this run may drop: only what the tests create
 * (`fm_t_*`, `fm_template_*`), and of that only what no run can still be using: a test
 * database or a half-built template older than STALE_AFTER_MS (their names carry their
 * creation time), or a template of other migrations that no run has used for as long.
 * Another checkout's run, with its own template being migrated, is never touched.
 */
export function staleTestDatabases(
  databases: { datname: string; comment: string | null }[],
  ours: string,
  now: number,
): string[] {
  const old = (ms: number) => !Number.isFinite(ms) || now - ms > STALE_AFTER_MS;
  return databases
    .filter(({ datname, comment }) => {
      if (datname === ours) return false;
      const testDb = datname.match(/^fm_t_([0-9a-z]+)_[0-9a-f]+$/);
      if (testDb) return old(parseInt(testDb[1]!, 36));
      const building = datname.match(/^fm_template_[0-9a-f]+_b_([0-9a-z]+)_\d+$/);
      if (building) return old(parseInt(building[1]!, 36));
      if (/^fm_template_[0-9a-f]+$/.test(datname)) return old(Number(comment?.match(TEMPLATE_COMMENT)?.[1]));
      return false;
    })
    .map((d) => d.datname);
}
