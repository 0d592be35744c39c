/**
 * Bulk statements: every column type the hub writes in bulk survives the JSON document, rows
 * keep the caller's order, and a large document sent on the transaction's own connection
 * commits and rolls back with the transaction.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { inject } from "vitest";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { bulkInsert, bulkRows, bulkStatement } from "./bulk.ts";
import { createDatabase, directQuery, prismaQuery, transactionConnection, type Database } from "./client.ts";

let tdb: TestDatabase;
let db: Database;
beforeAll(async () => {
  tdb = await createTestDatabase(inject("templateDatabase"));
  db = createDatabase(tdb.url, { poolMax: 3 });
  await db.prisma.$executeRawUnsafe(
    `CREATE TABLE bulk_t (seq bigserial PRIMARY KEY, id uuid, name varchar, n integer, x numeric, ok boolean,
       at timestamptz, tags text[], doc jsonb, status operational_status, raw json)`,
  );
});
afterAll(async () => {
  await db.close();
  await tdb.drop();
});

const COLUMNS = [
  { name: "id", type: "uuid" },
  { name: "name", type: "varchar" },
  { name: "n", type: "integer" },
  { name: "x", type: "numeric" },
  { name: "ok", type: "boolean" },
  { name: "at", type: "timestamptz" },
  { name: "tags", type: "text[]" },
  { name: "doc", type: "jsonb" },
  { name: "status", type: "operational_status" },
  // json, not jsonb: kept as written (key order included), and its JSON null is NULL too.
  { name: "raw", type: "json" },
] as const;

const row = (i: number, pad = "") => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  name: `d-${i} "quoted" \\ é ${pad}`,
  n: i,
  x: 1.5,
  ok: i % 2 === 0,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  tags: ["a", "b,c", 'd"e'],
  doc: { nested: [1, { k: null }], s: "x" },
  status: "AVAILABLE",
  raw: { z: 1, a: [true, { k: null }] },
});
const read = async () =>
  db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT id::text, name, n, x::text, ok, at, tags, doc, status::text, raw FROM bulk_t ORDER BY seq`,
  );

it("stores each type as given, JSON nulls as NULL, in the caller's order", async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  const nulls = Object.fromEntries(COLUMNS.map((c) => [c.name, null]));
  const n = await bulkInsert(db.prisma, "bulk_t", COLUMNS, [row(3), nulls, row(1)]);
  expect(n).toBe(3);
  const rows = await read();
  expect(rows.map((r) => r.n)).toEqual([3, null, 1]);
  expect(rows[0]).toEqual({
    id: row(3).id,
    name: row(3).name,
    n: 3,
    x: "1.5",
    ok: false,
    at: row(3).at,
    tags: ["a", "b,c", 'd"e'],
    doc: { nested: [1, { k: null }], s: "x" },
    status: "AVAILABLE",
    raw: { z: 1, a: [true, { k: null }] },
  });
  expect(Object.keys(rows[0]!.raw as object)).toEqual(["z", "a"]);
  expect(Object.values(rows[1]!).every((v) => v === null)).toBe(true);
});

it("a large document inside a transaction goes on that transaction's connection: rolled back with it, committed with it", async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  // Large enough (over 64 KiB) to take the direct path, too few rows for COPY.
  const rows = Array.from({ length: 150 }, (_, i) => row(i, "p".repeat(600)));
  await expect(
    db.prisma.$transaction(async (tx) => {
      expect(await transactionConnection(tx)).toBeDefined();
      await bulkInsert(tx, "bulk_t", COLUMNS, rows);
      // Seen inside the transaction, through Prisma: the same connection.
      expect((await tx.$queryRawUnsafe<{ n: bigint }[]>("SELECT count(*) AS n FROM bulk_t"))[0]!.n).toBe(150n);
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(await read()).toEqual([]);

  await db.prisma.$transaction(async (tx) => {
    // The statement reaches PostgreSQL through the transaction's own connection, not Prisma.
    const connection = (await transactionConnection(tx))!;
    const sent = vi.spyOn(connection, "query");
    await bulkInsert(tx, "bulk_t", COLUMNS, rows);
    expect(sent.mock.calls.some(([sql]) => String(sql).startsWith("INSERT INTO bulk_t"))).toBe(true);
    sent.mockRestore();
    const r = await bulkStatement(
      tx,
      `UPDATE bulk_t SET n = n + 1000 WHERE id IN (SELECT (v->>'id')::uuid FROM json_array_elements($1::json) v) RETURNING n`,
      JSON.stringify(rows.slice(0, 100)),
    );
    expect(r.count).toBe(100);
  });
  const stored = await read();
  expect(stored).toHaveLength(150);
  expect(stored.filter((r) => (r.n as number) >= 1000)).toHaveLength(100);
  expect(stored[149]!.name).toBe(rows[149]!.name);
  // Every column type as given on this path too.
  expect(stored[0]).toEqual({ ...row(0, "p".repeat(600)), x: "1.5", n: 1000 });
});

/** Values COPY's text format must escape (tab, newline, carriage return, backslash) or an array literal must quote. */
const awkward = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  name: `tab\there, new\nline, cr\r, back\\slash \\N, "quoted", é 😀 ${i}`,
  n: i,
  x: i % 3 === 0 ? Number.NaN : 2.25,
  ok: i % 2 === 1,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  tags:
    i % 5 === 0
      ? []
      : i % 7 === 0
        ? "not an array"
        : ["a\tb", 'q"uote', "back\\slash", "", null, "new\nline", "{braces}", "NULL", "comma,x"],
  doc: i % 4 === 0 ? null : { s: 'tab\t nl\n bs\\ q" \\N', arr: [null, 1.5, "x"], empty: "" },
  status: i % 6 === 0 ? null : "AVAILABLE",
  raw: i % 4 === 1 ? null : { 'q"': "tab\t nl\n bs\\ \\N", n: [null, 2.5] },
});

it("a large insert inside a transaction is a COPY, and stores every value as the JSON document does", async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  const rows = Array.from({ length: 260 }, (_, i) => awkward(i));
  // Through the JSON document (outside a transaction there is no connection to COPY on) ...
  expect(await bulkInsert(db.prisma, "bulk_t", COLUMNS, rows)).toBe(260);
  const viaJson = await read();
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  // ... and as a COPY on the transaction's connection.
  await db.prisma.$transaction(async (tx) => {
    const connection = (await transactionConnection(tx))!;
    const sent = vi.spyOn(connection, "query");
    expect(await bulkInsert(tx, "bulk_t", COLUMNS, rows)).toBe(260);
    expect(sent.mock.calls.map(([q]) => (q as { text?: string }).text)).toEqual([
      "COPY bulk_t (id, name, n, x, ok, at, tags, doc, status, raw) FROM STDIN",
    ]);
    sent.mockRestore();
  });
  const viaCopy = await read();
  expect(viaCopy).toEqual(viaJson);
  // And both are what was given, in the caller's order.
  expect(viaCopy.map((r) => r.n)).toEqual(rows.map((r) => r.n));
  expect(viaCopy[1]).toEqual({
    ...rows[1],
    x: "2.25",
    tags: ["a\tb", 'q"uote', "back\\slash", "", null, "new\nline", "{braces}", "NULL", "comma,x"],
  });
  expect(viaCopy[0]).toMatchObject({ x: null, tags: [], doc: null, status: null });
  expect(viaCopy[7]).toMatchObject({ tags: null });
});

it("a statement over many rows reads them from a temporary table a COPY filled, as it reads the JSON document", async () => {
  const rows = Array.from({ length: 240 }, (_, i) => awkward(i));
  const update = (db: Parameters<typeof bulkRows>[0], bump: number) =>
    bulkRows(
      db,
      COLUMNS,
      rows.map((r) => ({ ...r, n: r.n + bump })),
      (u, param) =>
        `UPDATE bulk_t AS t SET name = u.name || ${param(1)}, n = u.n, x = u.x, ok = u.ok, at = u.at, tags = u.tags,
                doc = u.doc, status = u.status, raw = u.raw FROM ${u} AS u WHERE t.id = u.id`,
      " (updated)",
    );
  const seed = async () => {
    await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
    await bulkInsert(
      db.prisma,
      "bulk_t",
      [{ name: "id", type: "uuid" }],
      rows.map((r) => ({ id: r.id })),
    );
  };
  await seed();
  // Outside a transaction: the JSON document.
  expect((await update(db.prisma, 1000)).count).toBe(240);
  const viaJson = await read();
  await seed();
  await db.prisma.$transaction(async (tx) => {
    const connection = (await transactionConnection(tx))!;
    const sent = vi.spyOn(connection, "query");
    expect((await update(tx, 1000)).count).toBe(240);
    const texts = sent.mock.calls.map(([q]) => String(typeof q === "string" ? q : (q as { text: string }).text));
    expect(texts[0]).toMatch(
      /^CREATE TEMPORARY TABLE fm_bulk_rows_\d+ \(id uuid, name varchar, .* status operational_status, raw json\) ON COMMIT DROP$/,
    );
    expect(texts[1]).toMatch(/^COPY fm_bulk_rows_\d+ \(id, name, n, x, ok, at, tags, doc, status, raw\) FROM STDIN$/);
    expect(texts[3]).toMatch(/^DROP TABLE fm_bulk_rows_\d+$/);
    sent.mockRestore();
    // A second one in the same transaction has a table of its own.
    expect((await update(tx, 2000)).count).toBe(240);
  });
  const viaCopy = await read();
  expect(viaCopy.map((r) => r.n)).toEqual(rows.map((r) => r.n + 2000));
  expect(viaCopy.map((r) => ({ ...r, n: 0 }))).toEqual(viaJson.map((r) => ({ ...r, n: 0 })));
  expect(viaCopy[1]!.name).toBe(`${rows[1]!.name} (updated)`);
});

it("a COPY that breaks a constraint rolls its transaction back, and says why", async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  const rows = Array.from({ length: 250 }, (_, i) => ({ ...row(i), status: i === 240 ? "NOT_A_STATUS" : "AVAILABLE" }));
  await expect(
    db.prisma.$transaction(async (tx) => {
      await bulkInsert(tx, "bulk_t", COLUMNS, rows.slice(0, 10)); // before it, through Prisma
      await bulkInsert(tx, "bulk_t", COLUMNS, rows);
    }),
  ).rejects.toThrow(/invalid input value for enum operational_status: "NOT_A_STATUS"/);
  expect(await read()).toEqual([]);
  // The pool's connections are sound afterwards.
  await db.prisma.$transaction(async (tx) => {
    expect(await bulkInsert(tx, "bulk_t", COLUMNS, rows.slice(0, 239))).toBe(239);
  });
  expect(await read()).toHaveLength(239);
});

it("a transaction's connection is asked once, and never lent to its transaction object after it ended", async () => {
  let ended: Parameters<Parameters<typeof db.prisma.$transaction>[0]>[0] | undefined;
  await db.prisma.$transaction(async (tx) => {
    const first = await transactionConnection(tx);
    const sent = vi.spyOn(first!, "query");
    expect(await transactionConnection(tx)).toBe(first);
    expect(sent).not.toHaveBeenCalled(); // remembered: no second probe
    sent.mockRestore();
    ended = tx;
  });
  // The connection went back to the pool (and may serve another transaction by now): a late
  // statement on the ended transaction's object must not run on it outside any transaction.
  await db.prisma.$transaction(async (other) => {
    await transactionConnection(other);
    await expect(transactionConnection(ended!)).rejects.toThrow();
  });
  await expect(transactionConnection(ended!)).rejects.toThrow();
});

it("a transaction that times out between direct statements commits none of them", async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  // Prisma rolls the transaction back when its budget runs out during the sleep, queueing
  // ROLLBACK on the connection before releasing it: the INSERT after it must not run on its own.
  await expect(
    db.prisma.$transaction(
      async (tx) => {
        await directQuery(tx, "SELECT 1");
        await directQuery(tx, "SELECT pg_sleep(0.8)");
        await directQuery(tx, "INSERT INTO bulk_t (name) VALUES ('after the timeout')");
      },
      { timeout: 300 },
    ),
  ).rejects.toThrow();
  // Whatever the INSERT met, it never reached the table.
  await new Promise((r) => setTimeout(r, 200));
  expect(await read()).toEqual([]);
});

it("a statement through Prisma says what it is by its first word", async () => {
  await expect(prismaQuery(db.prisma, "WITH x AS (SELECT 1) SELECT * FROM x")).rejects.toThrow(/SELECT, INSERT/);
  expect((await prismaQuery(db.prisma, "SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
});

it("outside a transaction there is no connection to borrow: the statement goes through Prisma", async () => {
  expect(await transactionConnection(db.prisma)).toBeUndefined();
  await db.prisma.$executeRawUnsafe("TRUNCATE bulk_t");
  const rows = Array.from({ length: 300 }, (_, i) => row(i, "p".repeat(400)));
  expect(await bulkInsert(db.prisma, "bulk_t", COLUMNS, rows)).toBe(300);
  expect(await read()).toHaveLength(300);
});
