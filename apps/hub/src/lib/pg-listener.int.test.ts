import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { pino } from "pino";
import { adminQuery, createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { eventually } from "@fm/test-support/wait";
import { PgListener } from "./pg-listener.ts";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 3 });
  pool.on("error", () => {});
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const listeners = async () =>
  (await adminQuery("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [db.name]))
    .rows as { pid: number }[];
const terminate = async (pids: number[]) => {
  for (const pid of pids) await adminQuery("SELECT pg_terminate_backend($1)", [pid]);
};

it("delivers notifications, reconnects after the server drops it, and survives errors after close", async () => {
  const listener = new PgListener(pool, pino({ level: "silent" }));
  const got: string[] = [];
  listener.on("test_channel", (p) => got.push(p));
  let reconnects = 0;
  listener.onReconnect(() => reconnects++);
  await listener.start();
  await pool.query("SELECT pg_notify('test_channel', 'one')");
  await eventually(async () => expect(got).toEqual(["one"]), 5000, 20);

  // The server drops the LISTEN connection: the listener comes back by itself.
  await terminate((await listeners()).map((r) => r.pid));
  await eventually(async () => expect(reconnects).toBe(2), 10_000, 50);
  await pool.query("SELECT pg_notify('test_channel', 'two')");
  await eventually(async () => expect(got).toEqual(["one", "two"]), 5000, 20);

  // After close, the connection is gone, not parked in the pool still listening: the pool has
  // one client fewer, and none of those left is checked out.
  const held = pool.totalCount;
  expect(pool.idleCount).toBe(held - 1);
  await listener.close();
  expect(await listeners()).toEqual([]);
  expect({ total: pool.totalCount, idle: pool.idleCount }).toEqual({ total: held - 1, idle: held - 1 });
  // A server terminating everything then cannot reach it (this used to crash on a double
  // release): the pool drops its dead clients and serves the next query.
  await terminate(
    (
      await adminQuery("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name])
    ).rows.map((r: { pid: number }) => r.pid),
  );
  await eventually(async () => expect(pool.totalCount).toBe(0), 10_000, 20);
  expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
});

it("closed while it is still connecting, releases that connection once made: the pool can end", async () => {
  // The connection is made only after close(): the hub shutting down while the listener is
  // reconnecting (after a database outage) used to leave it checked out, and pool.end() hung.
  const own = new pg.Pool({ connectionString: db.url, max: 2 });
  let made!: () => void;
  const gate = new Promise<void>((r) => (made = r));
  const gated = {
    connect: async () => {
      await gate;
      return own.connect();
    },
  } as unknown as pg.Pool;
  const listener = new PgListener(gated, pino({ level: "silent" }));
  listener.on("test_channel", () => {});
  const starting = listener.start();
  await listener.close();
  made();
  await starting;
  expect({ total: own.totalCount, idle: own.idleCount }).toEqual({ total: 0, idle: 0 });
  expect(await listeners()).toEqual([]);
  await own.end();
});
