/**
 * Drift guard between the Prisma schema (what the client believes) and the database the SQL
 * migrations build (what is true). Prisma's own check needs its native migration engine,
 * which cannot run here, so this compares Prisma's DMMF with PostgreSQL's catalog: tables,
 * columns, types, nullability, primary keys, unique constraints and indexes, both ways.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { MIGRATIONS_TABLE } from "./migrate.ts";

export const SCHEMA_FILE = fileURLToPath(new URL("../../../../prisma/schema.prisma", import.meta.url));

/**
 * Indexes that exist only in SQL because Prisma cannot express them (partial or expression
 * indexes). Each entry says why; anything else in the database must be in the schema.
 */
export const SQL_ONLY_INDEXES: Record<string, string> = {
  inventory_events_unpositioned_idx: "partial index (WHERE position IS NULL) for the feed sequencer",
  devices_tags_idx: "GIN index for the devices ?tag= filter",
  job_devices_one_active_job: "partial unique index (WHERE active): one active job per device",
  inventory_events_site_deleted_slug_idx:
    "partial expression index (data->>'slug' WHERE type = 'site.deleted'): the feed's site filter finds deleted sites by slug",
};

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
}
interface DmmfModel {
  name: string;
  dbName?: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  fields: { name: string }[];
}
interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName?: string | null }[];
}
export interface Dmmf {
  datamodel: { models: DmmfModel[]; indexes: DmmfIndex[]; enums: DmmfEnum[] };
}

/** Parses a Prisma schema into its DMMF with Prisma's own (Wasm) schema engine. */
export function dmmfOf(schemaText: string = readFileSync(SCHEMA_FILE, "utf8")): Dmmf {
  const require = createRequire(import.meta.url);
  const wasm = require("@prisma/prisma-schema-wasm") as { get_dmmf(params: string): string };
  return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: [["schema.prisma", schemaText]] }))) as Dmmf;
}

export interface Column {
  type: string;
  nullable: boolean;
}
export interface Index {
  table: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
}
export interface SchemaShape {
  tables: Record<string, Record<string, Column>>;
  indexes: Record<string, Index>;
  enums: Record<string, string[]>;
}

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  Boolean: "boolean",
  DateTime: "timestamp(3) without time zone",
  Json: "jsonb",
  Bytes: "bytea",
};

function nativeTypeSql([name, args]: [string, string[]]): string {
  const a = args.join(",");
  switch (name) {
    case "VarChar":
      return a ? `character varying(${a})` : "character varying";
    case "Char":
      return `character(${a || 1})`;
    case "Timestamptz":
      return `timestamp(${a || 6}) with time zone`;
    case "Timestamp":
      return `timestamp(${a || 6}) without time zone`;
    case "Uuid":
      return "uuid";
    case "Text":
      return "text";
    case "SmallInt":
      return "smallint";
    case "Integer":
      return "integer";
    case "BigInt":
      return "bigint";
    case "Decimal":
      return a ? `numeric(${a})` : "numeric";
    case "Date":
      return "date";
    case "JsonB":
      return "jsonb";
    case "Json":
      return "json";
    case "Inet":
      return "inet";
    case "Macaddr":
      return "macaddr";
    default:
      return name.toLowerCase();
  }
}

/** What the Prisma schema says the database looks like. */
export function expectedShape(dmmf: Dmmf): SchemaShape {
  const enumDb = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const tables: SchemaShape["tables"] = {};
  const columnOf = new Map<string, Map<string, string>>();
  const tableOf = new Map<string, string>();
  for (const model of dmmf.datamodel.models) {
    const table = model.dbName ?? model.name;
    tableOf.set(model.name, table);
    const cols: Record<string, Column> = {};
    const names = new Map<string, string>();
    for (const f of model.fields) {
      if (f.kind !== "scalar" && f.kind !== "enum") continue;
      const column = f.dbName ?? f.name;
      names.set(f.name, column);
      let type =
        f.kind === "enum"
          ? enumDb.get(f.type)!
          : f.nativeType
            ? nativeTypeSql(f.nativeType)
            : (SCALAR_TYPES[f.type] ?? f.type);
      if (f.isList) type += "[]";
      cols[column] = { type, nullable: !f.isRequired && !f.isList };
    }
    tables[table] = cols;
    columnOf.set(model.name, names);
  }
  const indexes: SchemaShape["indexes"] = {};
  for (const idx of dmmf.datamodel.indexes) {
    const table = tableOf.get(idx.model)!;
    const columns = idx.fields.map((f) => columnOf.get(idx.model)!.get(f.name) ?? f.name);
    const suffix = idx.type === "id" ? "pkey" : idx.type === "unique" ? "key" : "idx";
    const name = idx.dbName ?? (idx.type === "id" ? `${table}_pkey` : `${table}_${columns.join("_")}_${suffix}`);
    indexes[name] = {
      table,
      columns,
      unique: idx.type !== "normal" && idx.type !== "fulltext",
      primary: idx.type === "id",
    };
  }
  const enums = Object.fromEntries(
    dmmf.datamodel.enums.map((e) => [e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name)]),
  );
  return { tables, indexes, enums };
}

/** What the database (schema `public`) actually looks like. */
export async function liveShape(databaseUrl: string): Promise<SchemaShape> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const cols = await client.query<{ table: string; column: string; type: string; nullable: boolean }>(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> $1
        ORDER BY c.relname, a.attnum`,
      [MIGRATIONS_TABLE],
    );
    const idx = await client.query<{
      name: string;
      table: string;
      columns: string[];
      unique: boolean;
      primary: boolean;
    }>(
      `SELECT i.relname AS name, t.relname AS table, ix.indisunique AS unique, ix.indisprimary AS primary,
              array(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns
         FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND t.relname <> $1`,
      [MIGRATIONS_TABLE],
    );
    const enums = await client.query<{ name: string; values: string[] }>(
      `SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS values
         FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' GROUP BY t.typname`,
    );
    const tables: SchemaShape["tables"] = {};
    for (const r of cols.rows) (tables[r.table] ??= {})[r.column] = { type: r.type, nullable: r.nullable };
    const indexes: SchemaShape["indexes"] = {};
    for (const r of idx.rows) {
      if (SQL_ONLY_INDEXES[r.name]) continue;
      indexes[r.name] = { table: r.table, columns: r.columns, unique: r.unique, primary: r.primary };
    }
    return { tables, indexes, enums: Object.fromEntries(enums.rows.map((r) => [r.name, r.values])) };
  } finally {
    await client.end();
  }
}

/** Every difference, as one readable line each; empty when the two agree. */
export function diffShapes(expected: SchemaShape, live: SchemaShape): string[] {
  const out: string[] = [];
  for (const [table, cols] of Object.entries(expected.tables)) {
    const liveCols = live.tables[table];
    if (!liveCols) {
      out.push(`table ${table}: in the Prisma schema, missing from the database`);
      continue;
    }
    for (const [col, c] of Object.entries(cols)) {
      const l = liveCols[col];
      if (!l) out.push(`column ${table}.${col}: in the Prisma schema, missing from the database`);
      else {
        if (l.type !== c.type)
          out.push(`column ${table}.${col}: type is ${l.type} in the database, ${c.type} in the Prisma schema`);
        if (l.nullable !== c.nullable)
          out.push(
            `column ${table}.${col}: ${l.nullable ? "nullable" : "NOT NULL"} in the database, ${c.nullable ? "optional" : "required"} in the Prisma schema`,
          );
      }
    }
    for (const col of Object.keys(liveCols))
      if (!cols[col]) out.push(`column ${table}.${col}: in the database, missing from the Prisma schema`);
  }
  for (const table of Object.keys(live.tables))
    if (!expected.tables[table]) out.push(`table ${table}: in the database, missing from the Prisma schema`);

  for (const [name, i] of Object.entries(expected.indexes)) {
    const l = live.indexes[name];
    if (!l)
      out.push(`index ${name} on ${i.table}(${i.columns.join(", ")}): in the Prisma schema, missing from the database`);
    else if (
      l.table !== i.table ||
      l.columns.join() !== i.columns.join() ||
      l.unique !== i.unique ||
      l.primary !== i.primary
    ) {
      const d = (x: Index) =>
        `${x.primary ? "primary key" : x.unique ? "unique" : "index"} on ${x.table}(${x.columns.join(", ")})`;
      out.push(`index ${name}: ${d(l)} in the database, ${d(i)} in the Prisma schema`);
    }
  }
  for (const [name, l] of Object.entries(live.indexes)) {
    if (!expected.indexes[name])
      out.push(`index ${name} on ${l.table}(${l.columns.join(", ")}): in the database, missing from the Prisma schema`);
  }

  for (const [name, values] of Object.entries(expected.enums)) {
    const l = live.enums[name];
    if (!l) out.push(`enum ${name}: in the Prisma schema, missing from the database`);
    else if (l.join() !== values.join())
      out.push(`enum ${name}: values (${l.join(", ")}) in the database, (${values.join(", ")}) in the Prisma schema`);
  }
  for (const name of Object.keys(live.enums))
    if (!expected.enums[name]) out.push(`enum ${name}: in the database, missing from the Prisma schema`);
  return out;
}
