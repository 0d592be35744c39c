/**
 * GET /api/v1/devices/counts: one request for what the overview showed with one list request
 * per (site, status); every number equals the count the list reports for the same filters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONAL_STATUSES, type DeviceCounts } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub({ staleAfterMs: 600_000 });
  await seedInventory(hub.db.prisma, 40);
  // Stale devices (one of them quarantined, which reads QUARANTINED, not STALE) and an empty site.
  await hub.db.prisma.$executeRawUnsafe(
    `UPDATE device_observations SET slurm_observed_at = now() - interval '1 hour' WHERE device_id IN (SELECT id FROM devices ORDER BY id LIMIT 5)`,
  );
  await hub.db.prisma.$executeRawUnsafe(
    `UPDATE devices SET operational_status = 'QUARANTINED', cordoned = true, cordon_reason = 'counts test' WHERE id = (SELECT id FROM devices ORDER BY id LIMIT 1)`,
  );
  await hub.db.prisma.site.create({ data: { slug: "empty", name: "Empty" } });
});
afterAll(() => hub.close());

const get = async <T>(path: string): Promise<T> => {
  const res = await hub.app.inject({ url: path });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};
const listCount = async (qs: string) =>
  (await get<{ count: number }>(`/api/v1/devices?limit=1&brief=true&${qs}`)).count;

describe("GET /api/v1/devices/counts", () => {
  it.each(["", "deviceClass=GPU_COMPUTE&", "cordoned=false&", "site=stavanger&", "name=gpu&"])(
    "%sgroupBy=site,operationalStatus: every group's count is the list's count for that site and status",
    async (filters) => {
      const counts = await get<DeviceCounts>(`/api/v1/devices/counts?${filters}groupBy=site,operationalStatus`);
      expect(counts.total).toBe(await listCount(filters));
      expect(counts.groups.reduce((n, g) => n + g.count, 0)).toBe(counts.total);
      for (const site of ["keflavik", "stavanger", "empty"])
        for (const status of OPERATIONAL_STATUSES) {
          const group = counts.groups.find((g) => g.site?.slug === site && g.operationalStatus === status);
          const q = new URLSearchParams(filters);
          const elsewhere = q.has("site") && q.get("site") !== site;
          q.set("site", site);
          q.set("operationalStatus", status);
          expect(group?.count ?? 0, `${filters}${site} ${status}`).toBe(elsewhere ? 0 : await listCount(q.toString()));
        }
      expect(counts.groups.every((g) => g.count > 0)).toBe(true);
    },
  );

  it("counts stale devices as STALE unless quarantined, as the list reads them", async () => {
    const counts = await get<DeviceCounts>("/api/v1/devices/counts?groupBy=operationalStatus");
    const stale = counts.groups.find((g) => g.operationalStatus === "STALE")?.count;
    expect(stale).toBe(await listCount("operationalStatus=STALE"));
    // Five stale devices, one of them quarantined by an operator.
    expect(stale).toBeLessThan(await listCount("stale=true"));
    expect(await listCount("stale=true&operationalStatus=QUARANTINED")).toBeGreaterThan(0);
    expect(counts.groups.map((g) => g.operationalStatus)).toEqual(
      OPERATIONAL_STATUSES.filter((s) => counts.groups.some((g) => g.operationalStatus === s)),
    );
    expect(counts.groups.every((g) => g.site === undefined)).toBe(true);
  });

  it("groups by site alone, or gives the total alone", async () => {
    const bySite = await get<DeviceCounts>("/api/v1/devices/counts?groupBy=site&stale=true");
    expect(bySite.total).toBe(5);
    for (const g of bySite.groups) expect(g.count).toBe(await listCount(`stale=true&site=${g.site!.slug}`));
    expect(await get<DeviceCounts>("/api/v1/devices/counts?cordoned=true")).toEqual({
      total: await listCount("cordoned=true"),
      groups: [],
    });
  });

  it.each([
    ["groupBy=rack", "querystring.groupBy"],
    ["groupBy=site,", "querystring.groupBy"],
    ["operationalStatus=NAP", "querystring.operationalStatus"],
    ["site=atlantis", "querystring.site"],
  ])("refuses %s with a 400 naming the parameter", async (qs, path) => {
    const res = await hub.app.inject({ url: `/api/v1/devices/counts?${qs}` });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: { path: string }[] }>().errors.map((e) => e.path)).toContain(path);
  });
});
