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
