/**
 * Many rows in one statement: the rows travel as one JSON document, read element by element
 * (json_array_elements WITH ORDINALITY, in their order, so identity columns such as history ids
 * and feed sequence numbers follow the caller's order), each column cast from its element.
 * Prisma's createMany builds a statement with one parameter per value, which for a
 * 10,000-device reflection (30,000 history rows) took seconds of query building; this is one
 * parameter whatever the size. The document is read as `json`, not `jsonb`: PostgreSQL then only
 * checks it and converts each row's own jsonb values, rather than building one jsonb value of
 * the whole document first (for a first load's 23 MB of feed events, a third of the time). A
 * large document goes to the transaction's connection directly (see `transactionConnection`).
 */
import { directQuery, prismaQuery, type Db } from "./client.ts";

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
  const sql = `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")})
     SELECT ${columns.map((c) => jsonColumn(c)).join(", ")}
       FROM json_array_elements($1::json) WITH ORDINALITY AS x(v, ord)
      ORDER BY x.ord`;
  if (returning) return (await bulkStatement(db, `${sql} RETURNING ${returning}`, JSON.stringify(rows))).rows;
  return (await bulkStatement(db, sql, JSON.stringify(rows))).count;
}

/**
 * Column `c` of the JSON row `x.v`, as its PostgreSQL type: a JSON null (or an absent key) is
 * NULL; a jsonb column keeps the JSON value; an array column takes a JSON array of scalars.
 */
export function jsonColumn(c: BulkInsertColumn, row = "x.v"): string {
  if (!IDENT.test(c.name) || !TYPE.test(c.type)) throw new Error(`bulk: bad column ${c.name} ${c.type}`);
  const value = `${row}->'${c.name}'`;
  if (c.type === "jsonb") return `nullif((${value})::jsonb, 'null'::jsonb)`;
  if (c.type.endsWith("[]"))
    return `CASE WHEN json_typeof(${value}) = 'array' THEN ARRAY(SELECT json_array_elements_text(${value}))::${c.type} END`;
  return `(${row}->>'${c.name}')::${c.type}`;
}

/**
 * Documents from this size go to the transaction's connection directly. Below it Prisma's
 * round trip through JSON costs less than the extra `pg_backend_pid()` query of a transaction's
 * first direct statement.
 */
const DIRECT_FROM_CHARS = 64 * 1024;

/**
 * One statement whose first parameter is a JSON document (`$1::json`), the others plain values:
 * the rows it returns and the number of rows it wrote. RETURNING text, uuid or integer columns
 * only: on the direct path bigint and numeric come back as strings, not BigInt and Decimal.
 */
export async function bulkStatement(
  db: Db,
  sql: string,
  json: string,
  ...params: unknown[]
): Promise<{ rows: Record<string, unknown>[]; count: number }> {
  return json.length >= DIRECT_FROM_CHARS
    ? directQuery<Record<string, unknown>>(db, sql, json, ...params)
    : prismaQuery<Record<string, unknown>>(db, sql, json, ...params);
}
