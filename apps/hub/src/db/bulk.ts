/**
 * Many rows in one INSERT: the rows travel as one JSON document expanded by
 * jsonb_to_recordset, in their order (WITH ORDINALITY), so identity columns (history ids, feed
 * sequence numbers) follow the caller's order. Prisma's createMany builds a statement with one
 * parameter per value, which for a 10,000-device reflection (30,000 history rows) took
 * seconds of query building; this is one parameter whatever the size.
 */
import type { Db } from "./client.ts";

export interface BulkInsertColumn {
  /** Column name in PostgreSQL (snake_case). */
  name: string;
  /** PostgreSQL type, e.g. uuid, varchar, jsonb, timestamptz, text[]. */
  type: string;
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

/** A Prisma field name as its PostgreSQL column (`ironicObservedAt` → `ironic_observed_at`). */
export const snakeCase = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const TYPE = /^[a-z_]+(\[\])?$/;

export async function bulkInsert(
  db: Db,
  table: string,
  columns: readonly BulkInsertColumn[],
  rows: readonly Record<string, unknown>[],
): Promise<number>;
export async function bulkInsert(
  db: Db,
  table: string,
  columns: readonly BulkInsertColumn[],
  rows: readonly Record<string, unknown>[],
  returning: string,
): Promise<Record<string, unknown>[]>;
export async function bulkInsert(
  db: Db,
  table: string,
  columns: readonly BulkInsertColumn[],
  rows: readonly Record<string, unknown>[],
  returning?: string,
): Promise<number | Record<string, unknown>[]> {
  if (!rows.length) return returning ? [] : 0;
  if (returning && !/^[a-z_]+(, [a-z_]+)*$/.test(returning)) throw new Error(`bulkInsert: bad RETURNING list`);
  if (!IDENT.test(table) || columns.some((c) => !IDENT.test(c.name) || !TYPE.test(c.type)))
    throw new Error(`bulkInsert: bad identifier in ${table}`);
  const names = columns.map((c) => c.name).join(", ");
  const sql = `INSERT INTO ${table} (${names})
     SELECT ${columns.map((c) => `x.${c.name}`).join(", ")}
       FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (${columns.map((c) => `${c.name} ${c.type}`).join(", ")})) WITH ORDINALITY AS x(${names}, ord)
      ORDER BY x.ord`;
  if (returning)
    return db.$queryRawUnsafe<Record<string, unknown>[]>(`${sql} RETURNING ${returning}`, JSON.stringify(rows));
  return db.$executeRawUnsafe(sql, JSON.stringify(rows));
}
