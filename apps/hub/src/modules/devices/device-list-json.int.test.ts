/**
 * The full device list is written as JSON text, most of it by PostgreSQL (repo's JSON_COLUMNS,
 * state's toDeviceJson): every page must be the very bytes JSON.stringify writes of toDevice's
 * representation of the same rows, whatever the values (nulls, escapes, relations, interfaces,
 * cordons, burn-ins, health checks, staleness), by either query (a whole site in id order, any
 * other filter or order) and with or without the pool.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DeviceListQuery } from "@fm/domain";
import { DeviceListQuerySchema } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";
import { createDeviceService } from "./service.ts";
import { deviceRepo } from "./repo.ts";
import { toDevice } from "./state.ts";
import { transactionConnection } from "../../db/client.ts";

const STALE_AFTER_MS = 600_000;
const NOW = new Date("2031-05-06T07:08:09.010Z");
let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub({ staleAfterMs: STALE_AFTER_MS });
  // Observed a minute before NOW: fresh; the devices edited below make some stale.
  await seedInventory(hub.db.prisma, 12, new Date(NOW.getTime() - 60_000));
  const ids = (await hub.db.prisma.device.findMany({ orderBy: { id: "asc" }, select: { id: true } })).map((d) => d.id);
  const edit = (i: number, data: Parameters<typeof hub.db.prisma.device.update>[0]["data"]) =>
    hub.db.prisma.device.update({ where: { id: ids[i]! }, data });
  await edit(0, {
    notes: 'quotes " and \\ backslash, line\nbreak, tab\t, control \u0001, unicode é ✓ 😀, </script>',
    assetTag: "AT-1",
    rackPosition: "12.5",
    tags: ["a", 'b"c', "ü"],
    cordoned: true,
    cordonReason: 'reason with "quotes"',
    cordonedBy: "ops@example.com",
    cordonedAt: new Date("2031-05-06T07:00:00.001Z"),
    cordonSource: null,
  });
  await edit(1, {
    cordoned: true,
    cordonSource: "impairment",
    cordonReason: "health critical",
    healthStatus: "critical",
    healthConditions: [
      { name: "gpu0", status: "critical", message: "xid 79" },
      { status: "ok", name: "psu" },
    ],
    observations: { update: { healthObservedAt: new Date(NOW.getTime() - 30_000) } },
    slurmStateFlags: ["DRAIN", "NOT_RESPONDING"],
    slurmReason: "Kill task failed",
  });
  await edit(2, {
    burnInStatus: "PASSED",
    burnInJobId: "0190c1e0-0000-7000-8000-000000000001",
    burnInAt: new Date("2031-05-01T00:00:00.000Z"),
    rackId: null,
    deviceTypeId: null,
    deviceRoleId: null,
    serial: null,
    rackPosition: null,
  });
  // Stale: observed long before NOW by one source.
  await edit(3, {
    observations: { update: { ironicObservedAt: new Date(NOW.getTime() - 86_400_000) } },
    ironicMaintenance: true,
  });
  await edit(4, { burnInStatus: "FAILED", burnInJobId: null, burnInAt: new Date() });
  await edit(5, { rackPosition: "7.0", ironicLastError: "boom\r\n", ironicFault: "power failure" });
  for (const [i, name] of ["eth1", "eth0", "ib0"].entries())
    await hub.db.prisma.deviceInterface.create({
      data: {
        deviceId: ids[0]!,
        name,
        type: i === 2 ? "infiniband" : null,
        macAddress: i === 2 ? null : `aa:bb:cc:dd:ee:0${i}`,
        ibGuid: i === 2 ? "0000:0000:0000:0001" : null,
        mgmtOnly: i === 1,
        peerDevice: i === 0 ? 'leaf "1"' : null,
        peerInterface: null,
        netboxId: 100 + i,
      },
    });
});
afterAll(() => hub.close());

/** The page toDevice's representation makes of the same rows, with the page's count and cursor. */
async function expected(page: string): Promise<string> {
  const { items, count, nextCursor } = JSON.parse(page) as {
    items: { id: string }[];
    count: number;
    nextCursor: string;
  };
  const rows = new Map(
    (
      await deviceRepo.findByIds(
        hub.db.prisma,
        items.map((i) => i.id),
      )
    ).map((r) => [r.id, r]),
  );
  const devices = items.map((i) => JSON.stringify(toDevice(rows.get(i.id)!, NOW, STALE_AFTER_MS)));
  return `{"items":[${devices.join(",")}],"count":${count},"nextCursor":${JSON.stringify(nextCursor)}}`;
}

const ctx = {
  requestId: "test",
  principal: { id: "test", kind: "local" as const, scopes: new Set<string>() },
  log: undefined as never,
};
const query = (qs: string): DeviceListQuery => DeviceListQuerySchema.parse(Object.fromEntries(new URLSearchParams(qs)));

it("a device's full row is the same read inside a transaction (its own connection) as through Prisma", async () => {
  const ids = (await hub.db.prisma.device.findMany({ orderBy: { id: "asc" }, select: { id: true } })).map((d) => d.id);
  const outside = await deviceRepo.findByIds(hub.db.prisma, ids);
  const inside = await hub.db.prisma.$transaction(async (tx) => {
    const connection = (await transactionConnection(tx))!;
    const sent = vi.spyOn(connection, "query");
    const rows = await deviceRepo.lockByIds(tx, ids);
    // A prepared statement: planned once per connection, not on every push.
    expect(sent.mock.calls.map(([q]) => (q as { name?: string }).name)).toEqual(["devices-full-rows-locked"]);
    sent.mockRestore();
    return rows;
  });
  expect(inside).toEqual(outside);
  // Every kind of value is in there: a rack position, interfaces, arrays, health checks.
  expect(inside.map((d) => d.rackPosition)).toEqual(expect.arrayContaining(["12.5", "7"]));
  expect(inside[0]!.interfaces.map((i) => i.name)).toEqual(["eth0", "eth1", "ib0"]);
});

describe("the full device list as JSON text", () => {
  it.each([
    "limit=100",
    "site=keflavik&limit=5",
    "site=stavanger&limit=100",
    // Not a whole site in id order: the page's ids through the filter, then their rows.
    "site=keflavik&limit=5&updatedSince=1970-01-01T00:00:00Z",
    "limit=7&sort=-name",
    "limit=100&stale=true",
    "limit=100&cordoned=true",
  ])("%s: the bytes of JSON.stringify(toDevice(row)) for every device, with and without the pool", async (qs) => {
    for (const pool of [hub.db.pool, undefined]) {
      const service = createDeviceService({
        prisma: hub.db.prisma,
        repo: deviceRepo,
        pool,
        staleAfterMs: STALE_AFTER_MS,
        now: () => NOW,
      });
      let page = await service.listJson(ctx, query(qs));
      expect(JSON.parse(page).items.length).toBeGreaterThan(0);
      expect(page).toBe(await expected(page));
      // And the next page, after the cursor.
      const next = (JSON.parse(page) as { nextCursor: string | null }).nextCursor;
      if (next) {
        page = await service.listJson(ctx, query(`${qs}&cursor=${next}`));
        expect(page).toBe(await expected(page));
      }
    }
  });

  it("the whole-site query and the filtered one answer the same devices and count", async () => {
    const service = createDeviceService({
      prisma: hub.db.prisma,
      repo: deviceRepo,
      pool: hub.db.pool,
      staleAfterMs: STALE_AFTER_MS,
      now: () => NOW,
    });
    const items = (qs: string) =>
      service.listJson(ctx, query(qs)).then((p) => JSON.stringify({ ...JSON.parse(p), nextCursor: null }));
    expect(await items("site=keflavik&limit=100")).toBe(
      await items("site=keflavik&limit=100&updatedSince=1970-01-01T00:00:00Z"),
    );
    expect(await items("limit=3")).toBe(await items("limit=3&updatedSince=1970-01-01T00:00:00Z"));
  });

  it("brief=true: the whole-site query and the filtered one answer the same page, with and without the pool", async () => {
    for (const pool of [hub.db.pool, undefined]) {
      const service = createDeviceService({
        prisma: hub.db.prisma,
        repo: deviceRepo,
        pool,
        staleAfterMs: STALE_AFTER_MS,
        now: () => NOW,
      });
      const page = async (qs: string) => ({ ...(await service.listBrief(ctx, query(qs))), nextCursor: null });
      for (const qs of ["site=keflavik&limit=100&brief=true", "limit=5&brief=true"]) {
        const whole = await page(qs);
        expect(whole.items.length, qs).toBeGreaterThan(0);
        expect(JSON.stringify(whole), qs).toBe(JSON.stringify(await page(`${qs}&updatedSince=1970-01-01T00:00:00Z`)));
      }
    }
  });

  it("an unknown site is the same 400 by either query", async () => {
    const service = createDeviceService({
      prisma: hub.db.prisma,
      repo: deviceRepo,
      pool: hub.db.pool,
      staleAfterMs: STALE_AFTER_MS,
    });
    for (const qs of ["site=nowhere", "site=nowhere&cordoned=true", "site=0190c1e0-0000-7000-8000-000000000009"])
      for (const list of [() => service.listJson(ctx, query(qs)), () => service.listBrief(ctx, query(qs))])
        await expect(list(), qs).rejects.toMatchObject({ status: 400, code: "unknown_site" });
  });
});
