/**
 * Many rows in one statement: the rows travel as one JSON document, read element by element
 * (json_array_elements WITH ORDINALITY, in their order, so identity columns such as history ids
 * and feed sequence numbers follow the caller's order), each column cast from its element.
 * Prisma's createMany builds a statement with one parameter per value, which for a
 * 10,000-device reflection (30,000 history rows) took seconds of query building; this is one
 * parameter whatever the size. The document is read as `json`, not `jsonb`: PostgreSQL then only
 * checks it and converts each row's own jsonb values, rather than building one jsonb value of
 * the whole document first (for a first load's 23 MB of feed events, a third of the time). A
 * large document goes to the transaction's connection directly (see `transactionConnection`),
 * and a large insert without RETURNING goes there as COPY, which PostgreSQL reads faster still.
 */
import { directCopy, directQuery, prismaQuery, transactionConnection, type Db } from "./client.ts";

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
  if (!returning && rows.length >= COPY_FROM_ROWS) {
    const copied = await directCopy(
      db,
      `COPY ${table} (${columns.map((c) => c.name).join(", ")}) FROM STDIN`,
      copyLines(columns, rows),
    );
    if (copied !== undefined) return copied;
  }
  const sql = `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")})
     SELECT ${columns.map((c) => jsonColumn(c)).join(", ")}
       FROM json_array_elements($1::json) WITH ORDINALITY AS x(v, ord)
      ORDER BY x.ord`;
  if (returning) return (await bulkStatement(db, `${sql} RETURNING ${returning}`, JSON.stringify(rows))).rows;
  return (await bulkStatement(db, sql, JSON.stringify(rows))).count;
}

/**
 * Inserts of this many rows and more, inside a transaction, go through COPY on its own
 * connection: PostgreSQL reads each value once, where the JSON document is validated, split
 * into elements, and every column read again from its element's text (a first load's 50,000
 * feed events, 111 MB: 2.4 s against 5.4 s, measured on PostgreSQL 15).
 */
const COPY_FROM_ROWS = 200;
/** Rows per COPY data message. */
const COPY_CHUNK_ROWS = 500;

/** The rows as COPY text, a chunk of lines at a time (columns tab-separated, NULL as \N). */
function* copyLines(columns: readonly BulkInsertColumn[], rows: readonly Record<string, unknown>[]): Generator<string> {
  for (let from = 0; from < rows.length; from += COPY_CHUNK_ROWS) {
    let chunk = "";
    for (const row of rows.slice(from, from + COPY_CHUNK_ROWS))
      chunk += `${columns.map((c) => copyField(row[c.name], c.type)).join("\t")}\n`;
    yield chunk;
  }
}

const COPY_SPECIAL = /[\\\n\r\t]/g;
const HAS_COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_ESCAPE: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * One value as a COPY text field, meaning what the JSON document's `jsonColumn` makes of it: a
 * null, absent or non-finite value is NULL (a json or jsonb column's JSON null too); a json or
 * jsonb column takes the value's JSON; an array column an array of its elements (NULL when not an array).
 */
function copyField(value: unknown, type: string): string {
  if (value === null || value === undefined || (typeof value === "number" && !Number.isFinite(value))) return "\\N";
  let text: string;
  if (type === "jsonb" || type === "json") {
    // JSON text escapes every control character itself: only its backslashes need COPY's escape.
    text = JSON.stringify(value);
    return text.includes("\\") ? text.replaceAll("\\", "\\\\") : text;
  }
  if (type.endsWith("[]")) {
    if (!Array.isArray(value)) return "\\N";
    text = `{${value.map(arrayElement).join(",")}}`;
  } else text = scalarText(value);
  // Most values hold none: looking costs less than replacing.
  return HAS_COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIAL, (c) => COPY_ESCAPE[c]!) : text;
}

const scalarText = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value);

/** An element of an array literal: quoted, its quotes and backslashes escaped; NULL unquoted. */
const arrayElement = (value: unknown): string =>
  value === null || value === undefined || (typeof value === "number" && !Number.isFinite(value))
    ? "NULL"
    : `"${scalarText(value).replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * Column `c` of the JSON row `x.v`, as its PostgreSQL type: a JSON null (or an absent key) is
 * NULL; a json or jsonb column keeps the JSON value; an array column takes a JSON array of scalars.
 */
export function jsonColumn(c: BulkInsertColumn, row = "x.v"): string {
  if (!IDENT.test(c.name) || !TYPE.test(c.type)) throw new Error(`bulk: bad column ${c.name} ${c.type}`);
  const value = `${row}->'${c.name}'`;
  if (c.type === "jsonb") return `nullif((${value})::jsonb, 'null'::jsonb)`;
  // json has no equality operator: its null is found by its type.
  if (c.type === "json") return `CASE WHEN json_typeof(${value}) <> 'null' THEN ${value} END`;
  if (c.type.endsWith("[]"))
    return `CASE WHEN json_typeof(${value}) = 'array' THEN ARRAY(SELECT json_array_elements_text(${value}))::${c.type} END`;
  return `(${row}->>'${c.name}')::${c.type}`;
}

/** Temporary tables made for bulkRows, numbered so that two in one session never share a name. */
let temporaryTables = 0;

/**
 * One statement reading many rows as a relation: `statement(relation, param)` is the statement,
 * `relation` standing for the rows (with `columns` as its columns) and `param(n)` for the n-th
 * of `params` (from 1). Many rows inside a transaction are a temporary table filled by COPY on
 * its connection, dropped after the statement (PostgreSQL reads each value once; a first
 * load's UPDATE of 50,000 devices spent more time taking its columns out of the JSON document
 * than writing the rows); otherwise they are the JSON document, element by element.
 */
export async function bulkRows(
  db: Db,
  columns: readonly BulkInsertColumn[],
  rows: readonly Record<string, unknown>[],
  statement: (relation: string, param: (n: number) => string) => string,
  ...params: unknown[]
): Promise<{ rows: Record<string, unknown>[]; count: number }> {
  if (columns.some((c) => !IDENT.test(c.name) || !TYPE.test(c.type))) throw new Error(`bulkRows: bad column`);
  const names = columns.map((c) => c.name).join(", ");
  if (rows.length >= COPY_FROM_ROWS && (await transactionConnection(db))) {
    const table = `fm_bulk_rows_${++temporaryTables}`;
    await directQuery(
      db,
      `CREATE TEMPORARY TABLE ${table} (${columns.map((c) => `${c.name} ${c.type}`).join(", ")}) ON COMMIT DROP`,
    );
    if ((await directCopy(db, `COPY ${table} (${names}) FROM STDIN`, copyLines(columns, rows))) === undefined)
      throw new Error("bulkRows: the transaction's connection went away between two statements");
    const result = await directQuery<Record<string, unknown>>(
      db,
      statement(table, (n) => `$${n}`),
      ...params,
    );
    await directQuery(db, `DROP TABLE ${table}`);
    return result;
  }
  const relation = `(SELECT ${columns.map((c) => `${jsonColumn(c)} AS ${c.name}`).join(", ")}
                       FROM json_array_elements($1::json) AS x(v))`;
  return bulkStatement(
    db,
    statement(relation, (n) => `$${n + 1}`),
    JSON.stringify(rows),
    ...params,
  );
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
