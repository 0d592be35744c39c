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
