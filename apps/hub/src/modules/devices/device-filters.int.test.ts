/**
 * The device list's enum filters as operators type them: several comma-separated values (a
 * device matches any), any case, and each value checked, a bad one named in a 400 with the
 * values allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONAL_STATUSES, type DeviceBrief } from "@fm/domain";
import { bearer } from "@fm/test-support/process";
import { seedDemo } from "../../seed/demo.ts";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedDemo(hub.db.prisma, {
    sites: [{ slug: "keflavik", name: "Keflavik", region: null }],
    devicesPerSite: 80,
  });
});
afterAll(() => hub.close());

type Page = { items: DeviceBrief[]; count: number; nextCursor: string | null };
const get = async (qs: string) => {
  const res = await fetch(`${hub.url}/api/v1/devices/?brief=true&${qs.includes("limit=") ? "" : "limit=1000&"}${qs}`, {
    headers: bearer(hub.adminToken),
  });
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    body: (await res.json()) as Record<string, unknown>,
  };
};
const page = async (qs: string) => {
  const r = await get(qs);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as unknown as Page;
};
const names = (p: Page) => p.items.map((d) => d.name).sort();

describe("device list filters with several values", () => {
  it("operationalStatus=IMPAIRED,FAILED lists the devices of either status, and only those", async () => {
    const impaired = await page("operationalStatus=IMPAIRED");
    const failed = await page("operationalStatus=FAILED");
    expect(impaired.count).toBeGreaterThan(0);
    expect(failed.count).toBeGreaterThan(0);
    const both = await page("operationalStatus=IMPAIRED,FAILED");
    expect(both.count).toBe(impaired.count + failed.count);
    expect(names(both)).toEqual([...names(impaired), ...names(failed)].sort());
    expect(new Set(both.items.map((d) => d.operationalStatus))).toEqual(new Set(["IMPAIRED", "FAILED"]));
  });

  it("takes enum values in any case, as the enum spells them", async () => {
    const upper = await page("operationalStatus=IMPAIRED,FAILED&status=active");
    const lower = await page("operationalStatus=impaired,Failed&status=ACTIVE");
    expect(lower.count).toBe(upper.count);
    expect(names(lower)).toEqual(names(upper));
  });

  it("burnIn=failed,none lists the devices whose last burn-in failed or that never had one, not those that passed", async () => {
    const all = await page("");
    const [passed, failed] = all.items;
    const result = (status: string) => ({
      burnInStatus: status,
      burnInJobId: "00000000-0000-7000-8000-000000000001",
      burnInAt: new Date(),
    });
    await hub.db.prisma.device.update({ where: { id: passed!.id }, data: result("PASSED") });
    await hub.db.prisma.device.update({ where: { id: failed!.id }, data: result("FAILED") });
    const failedOrNone = await page("burnIn=failed,none");
    expect(failedOrNone.count).toBe(all.count - 1);
    expect(failedOrNone.items.map((d) => d.id)).toContain(failed!.id);
    expect(failedOrNone.items.map((d) => d.id)).not.toContain(passed!.id);
    const onlyFailed = await page("burnIn=FAILED");
    expect(onlyFailed.items.map((d) => d.id)).toEqual([failed!.id]);
    // The list's row says so: a device that failed burn-in does not look like a healthy one.
    expect(onlyFailed.items[0]!.burnIn).toMatchObject({ status: "FAILED" });
  });

  it("refuses a bad value with a 400 problem naming it and the values allowed", async () => {
    const r = await get("operationalStatus=IMPAIRED,BROKEN");
    expect(r.status).toBe(400);
    expect(r.type).toMatch(/^application\/problem\+json/);
    const text = JSON.stringify(r.body);
    expect(text).toContain("BROKEN");
    expect(text).toContain("AVAILABLE, ");
    expect(text).toContain("IMPAIRED");
    const c = await get("deviceClass=gpu_compute,toaster");
    expect(c.status).toBe(400);
    expect(JSON.stringify(c.body)).toContain("toaster");
    expect(JSON.stringify(c.body)).toContain("GPU_COMPUTE");
  });

  it("counts take the same filters", async () => {
    const res = await fetch(`${hub.url}/api/v1/devices/counts?operationalStatus=impaired,FAILED`, {
      headers: bearer(hub.adminToken),
    });
    expect(res.status).toBe(200);
    const both = (await page("operationalStatus=IMPAIRED,FAILED")).count;
    expect(((await res.json()) as { total: number }).total).toBe(both);
  });

  it("page=N jumps to the Nth page of the order, the last one included, and its cursor pages on from there", async () => {
    const all = (await page("")).items.map((d) => d.id);
    const at = async (qs: string) => {
      const r = await get(qs);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as unknown as Page;
    };
    // 80 devices, 30 a page: pages 1..3, the last holding 20.
    for (const qs of ["limit=30", `limit=30&operationalStatus=${OPERATIONAL_STATUSES.join(",")}`]) {
      const second = await at(`${qs}&page=2`);
      expect(
        second.items.map((d) => d.id),
        qs,
      ).toEqual(all.slice(30, 60));
      const next = await at(`${qs}&cursor=${encodeURIComponent(second.nextCursor!)}`);
      expect(
        next.items.map((d) => d.id),
        qs,
      ).toEqual(all.slice(60));
      expect(next.nextCursor).toBeNull();
    }
    const last = await at("limit=30&page=3");
    expect(last.items.map((d) => d.id)).toEqual(all.slice(60));
    expect(last.nextCursor).toBeNull();
    expect((await at("limit=30&page=4")).items).toEqual([]);
    const sorted = (await page("sort=-name")).items.map((d) => d.id);
    expect((await at("limit=30&sort=-name&page=3")).items.map((d) => d.id)).toEqual(sorted.slice(60));
    const both = await get(`limit=30&page=2&cursor=${encodeURIComponent(last.nextCursor ?? "x")}`);
    expect(both.status).toBe(400);
    expect((await get("page=0")).status).toBe(400);
  });
});
