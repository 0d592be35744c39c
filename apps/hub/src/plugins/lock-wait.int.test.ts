/**
 * A write that waits for rows another transaction holds (a reflection push stamping every device
 * of a site holds them until it commits) past its transaction's time budget is rolled back and
 * answers 503 with Retry-After: safe to retry, never an opaque 500, and nothing is half-written.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";
import { seedInventory } from "../testing/inventory.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
  await seedInventory(hub.db.prisma, 2);
});
afterAll(() => hub.close());

it("a write held past its transaction budget by another transaction's row lock answers 503, and writes nothing", async () => {
  const device = await hub.db.prisma.device.findFirstOrThrow({ where: { cordoned: false } });
  const holder = new pg.Client({ connectionString: hub.database.url });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM devices WHERE id = $1 FOR UPDATE", [device.id]);
    const patch = hub.app.inject({
      method: "PATCH",
      url: `/api/v1/devices/${device.id}`,
      payload: { cordoned: true, cordonReason: "held" },
    });
    // Longer than the interactive transaction's 5 s budget (Prisma's default).
    await new Promise((r) => setTimeout(r, 6000));
    await holder.query("ROLLBACK");
    const res = await patch;
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    expect(res.json()).toMatchObject({ code: "database_contention" });
  } finally {
    await holder.end();
  }
  const after = await hub.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } });
  expect(after).toMatchObject({ cordoned: false, version: device.version });
  expect(await hub.db.prisma.auditLog.count({ where: { resourceId: device.id } })).toBe(0);
  // Retried once the rows are free, it goes through.
  const retried = await hub.app.inject({
    method: "PATCH",
    url: `/api/v1/devices/${device.id}`,
    payload: { cordoned: true, cordonReason: "held" },
  });
  expect(retried.statusCode, retried.body).toBe(200);
});

/**
 * What a foreign-key check takes on the parent row (FOR KEY SHARE: a push inserting rows that
 * name a site or a device), held by another transaction, does not hold up a change of that parent:
 * the hub's row locks are FOR NO KEY UPDATE. With FOR UPDATE each waited on the other, and under
 * load PostgreSQL ended one as a deadlock (a 500 then).
 */
it.each([
  ["a site's PATCH", "sites"],
  ["a device's cordon", "devices"],
] as const)("%s is not held up by a transaction holding its row's foreign-key share lock", async (_what, table) => {
  const device = await hub.db.prisma.device.findFirstOrThrow({ where: { cordoned: false } });
  const id = table === "sites" ? device.siteId : device.id;
  const holder = new pg.Client({ connectionString: hub.database.url });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR KEY SHARE`, [id]);
    const res = await hub.app.inject(
      table === "sites"
        ? { method: "PATCH", url: `/api/v1/sites/${id}`, payload: { name: "Renamed while referenced" } }
        : { method: "PATCH", url: `/api/v1/devices/${id}`, payload: { cordoned: true, cordonReason: "referenced" } },
    );
    // Answered while the other transaction still holds its lock.
    expect(res.statusCode, res.body).toBe(200);
  } finally {
    await holder.query("ROLLBACK");
    await holder.end();
  }
});

it("a transaction PostgreSQL ends to break a deadlock answers 503 database_contention, and writes nothing", async () => {
  const site = await hub.db.prisma.site.findFirstOrThrow();
  const admin = new pg.Client({ connectionString: hub.database.url });
  await admin.connect();
  // PostgreSQL's own deadlock error (SQLSTATE 40P01), raised inside the hub's transaction.
  await admin.query(`CREATE FUNCTION test_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`);
  await admin.query(
    "CREATE TRIGGER test_deadlock BEFORE UPDATE ON sites FOR EACH ROW EXECUTE FUNCTION test_deadlock()",
  );
  try {
    const res = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      payload: { name: "Deadlocked" },
    });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ code: "database_contention" });
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
  } finally {
    await admin.query("DROP TRIGGER test_deadlock ON sites; DROP FUNCTION test_deadlock()");
    await admin.end();
  }
  expect((await hub.db.prisma.site.findUniqueOrThrow({ where: { id: site.id } })).name).toBe(site.name);
});
