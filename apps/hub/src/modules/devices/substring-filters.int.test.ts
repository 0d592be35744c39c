/**
 * Substring filters match the text as typed: `_`, `%` and `\` are characters, not LIKE's
 * wildcards and escape (`?name=_` once listed every device, `?q=%25` every site).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer } from "@fm/test-support/process";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo", name: "Oslo 100% hall" }, [
    { name: "gpu_a01", role: "gpu-node" },
    { name: "gpuxa02", role: "gpu-node" },
    { name: "gpu-a03", role: "gpu-node" },
    { name: "cpu\\b04", role: "cpu-node" },
  ]);
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "bergen", name: "Bergen hall" }, []);
});
afterAll(() => hub.close());

const list = async <T extends { name?: string; slug?: string }>(path: string) => {
  const res = await fetch(`${hub.url}${path}`, { headers: bearer(hub.adminToken) });
  expect(res.status, path).toBe(200);
  return ((await res.json()) as { items: T[] }).items;
};
const deviceNames = async (name: string) =>
  (await list<{ name: string }>(`/api/v1/devices/?brief=true&limit=100&name=${encodeURIComponent(name)}`))
    .map((d) => d.name)
    .sort();
const siteSlugs = async (q: string) =>
  (await list<{ slug: string }>(`/api/v1/sites/?q=${encodeURIComponent(q)}`)).map((s) => s.slug).sort();

describe("substring filters", () => {
  it("a device name filter takes _, % and \\ literally", async () => {
    expect(await deviceNames("_")).toEqual(["gpu_a01"]);
    expect(await deviceNames("gpu_a")).toEqual(["gpu_a01"]);
    expect(await deviceNames("%")).toEqual([]);
    expect(await deviceNames("\\")).toEqual(["cpu\\b04"]);
    expect(await deviceNames("\\b")).toEqual(["cpu\\b04"]);
    // Plain text still matches anywhere, in any case.
    expect(await deviceNames("A0")).toEqual(["gpu-a03", "gpu_a01", "gpuxa02"]);
  });

  it("a site search takes % and _ literally", async () => {
    expect(await siteSlugs("%")).toEqual(["oslo"]);
    expect(await siteSlugs("_")).toEqual([]);
    expect(await siteSlugs("hall")).toEqual(["bergen", "oslo"]);
  });
});
