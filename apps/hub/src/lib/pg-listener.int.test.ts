import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { pino } from "pino";
import type { FastifyBaseLogger } from "fastify";
import { adminQuery, createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const listeners = async () =>
  (await adminQuery("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [db.name]))
    .rows as { pid: number }[];
const terminate = async (pids: number[]) => {
  for (const pid of pids) await adminQuery("SELECT pg_terminate_backend($1)", [pid]);
};

it("delivers notifications, reconnects after the server drops it, and survives errors after close", async () => {
  const listener = new PgListener(pool, pino({ level: "silent" }) as unknown as FastifyBaseLogger);
  const got: string[] = [];
  listener.on("test_channel", (p) => got.push(p));
  let reconnects = 0;
  listener.onReconnect = () => reconnects++;
  await listener.start();
  await pool.query("SELECT pg_notify('test_channel', 'one')");
  for (let i = 0; i < 50 && got.length < 1; i++) await sleep(20);
  expect(got).toEqual(["one"]);

  // The server drops the LISTEN connection: the listener comes back by itself.
  await terminate((await listeners()).map((r) => r.pid));
  for (let i = 0; i < 100 && reconnects < 2; i++) await sleep(50);
  expect(reconnects).toBe(2);
  await pool.query("SELECT pg_notify('test_channel', 'two')");
  for (let i = 0; i < 50 && got.length < 2; i++) await sleep(20);
  expect(got).toEqual(["one", "two"]);

  // After close, the connection is gone, not parked in the pool still listening; a server
  // terminating everything then cannot reach it (this used to crash on a double release).
  await listener.close();
  expect(await listeners()).toEqual([]);
  await terminate(
    (
      await adminQuery("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name])
    ).rows.map((r: { pid: number }) => r.pid),
  );
  await sleep(200);
  expect(pool.totalCount).toBeLessThanOrEqual(3);
});
