/**
 * The device list's enum filters as operators type them: several comma-separated values (a
 * device matches any), any case, and each value checked, a bad one named in a 400 with the
 * values allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeviceBrief } from "@fm/domain";
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
  const res = await fetch(`${hub.url}/api/v1/devices/?limit=1000&brief=true&${qs}`, {
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
});
