/**
 * The device list at scale: the brief representation, the exact count a whole site's list
 * reads from site_device_counts, and fresh planner statistics after bulk loads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, DeviceBrief, NetboxItem } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { seedDemo } from "../../seed/demo.ts";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub();
});
afterAll(() => hub.close());

const api = async <T>(path: string, init: RequestInit = {}, token = hub.adminToken) => {
  const res = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...bearer(token), ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return JSON.parse(text) as T;
};
type Page<T> = { items: T[]; count: number; nextCursor: string | null };
const rowsAt = async (siteSlug?: string) =>
  Number(
    (
      await hub.db.prisma.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*) AS n FROM devices d JOIN sites s ON s.id = d.site_id WHERE $1::text IS NULL OR s.slug = $1`,
        siteSlug ?? null,
      )
    )[0]!.n,
  );
/**
 * The planner's idea of how many rows devices holds. ANALYZE sets it in its own transaction
 * (and, on tables this small, to the exact number); until then it is -1, or what the last
 * analysis saw.
 */
const plannerRows = async () =>
  (
    await hub.db.prisma.$queryRaw<{ n: number }[]>`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'devices'`
  )[0]!.n;

describe("the device list at scale", () => {
  it("seeding demo data leaves the planner fresh statistics of what it loaded", async () => {
    await seedDemo(hub.db.prisma, {
      sites: [
        { slug: "keflavik", name: "Keflavik", region: null },
        { slug: "stavanger", name: "Stavanger", region: null },
      ],
      devicesPerSite: 60,
    });
    expect(await plannerRows()).toBe(120);
  });

  it("brief=true shows each device's name, site, states, cordon, burn-in and failure reason as the full representation does", async () => {
    // Two devices in no other state a stale observation or a cordon could hide behind (demo data
    // varies the states, and which devices come first by id depends on when they were made).
    const [stale, quarantined] = (
      await api<Page<Device>>("/api/v1/devices/?site=stavanger&operationalStatus=AVAILABLE&limit=2")
    ).items;
    await hub.db.prisma.device.update({
      where: { id: stale!.id },
      data: { observations: { update: { ironicObservedAt: new Date(Date.now() - 86_400_000) } } },
    });
    await api(`/api/v1/devices/${quarantined!.id}`, {
      method: "PATCH",
      body: JSON.stringify({ cordoned: true, cordonReason: "brief test" }),
    });
    await hub.db.prisma.device.update({
      where: { id: quarantined!.id },
      data: { observations: { update: { netboxObservedAt: new Date(Date.now() - 86_400_000) } } },
    });
    for (const qs of ["limit=1000", "site=stavanger&limit=1000", "operationalStatus=STALE&limit=1000"]) {
      const full = await api<Page<Device>>(`/api/v1/devices/?${qs}`);
      const brief = await api<Page<DeviceBrief>>(`/api/v1/devices/?${qs}&brief=true`);
      expect(brief.count, qs).toBe(full.count);
      expect(brief.items, qs).toEqual(
        full.items.map((d) => ({
          id: d.id,
          name: d.name,
          site: d.site,
          serial: d.serial,
          operationalStatus: d.operationalStatus,
          stale: d.stale,
          cordoned: d.cordoned,
          cordonReason: d.cordonReason,
          cordonedBy: d.cordonedBy,
          cordonedAt: d.cordonedAt,
          burnIn: d.burnIn,
          updatedAt: d.updatedAt,
          netboxStatus: d.netbox.status,
          provisionState: d.ironic.provisionState,
          failureReason: d.ironic.lastError ?? d.ironic.fault,
        })),
      );
    }
    const states = (await api<Page<DeviceBrief>>("/api/v1/devices/?site=stavanger&limit=1000&brief=true")).items;
    expect(states.find((d) => d.id === stale!.id)).toMatchObject({ operationalStatus: "STALE", stale: true });
    expect(states.find((d) => d.id === quarantined!.id)).toMatchObject({
      operationalStatus: "QUARANTINED",
      stale: true,
      cordoned: true,
    });
  });

  it("counts a whole site, and the fleet, exactly through inserts, moves, deletes and a rolled-back insert", async () => {
    const counts = async () => ({
      keflavik: (await api<Page<Device>>("/api/v1/devices/?site=keflavik&limit=1")).count,
      stavanger: (await api<Page<Device>>("/api/v1/devices/?site=stavanger&limit=1&brief=true")).count,
      fleet: (await api<Page<Device>>("/api/v1/devices/?limit=1")).count,
    });
    const truth = async () => ({
      keflavik: await rowsAt("keflavik"),
      stavanger: await rowsAt("stavanger"),
      fleet: await rowsAt(),
    });
    expect(await counts()).toEqual(await truth());
    const sites = Object.fromEntries((await hub.db.prisma.site.findMany()).map((s) => [s.slug, s.id]));
    const p = hub.db.prisma;
    await p.device.createMany({
      data: Array.from({ length: 7 }, (_, i) => ({
        siteId: sites.keflavik!,
        name: `count-${i}`,
        netboxStatus: "planned",
      })),
    });
    expect(await counts()).toEqual({ ...(await truth()), keflavik: 67 });
    await p.device.updateMany({ where: { name: { in: ["count-0", "count-1"] } }, data: { siteId: sites.stavanger! } });
    expect(await counts()).toEqual({ ...(await truth()), keflavik: 65, stavanger: 62 });
    await p.device.deleteMany({ where: { name: { startsWith: "count-" } } });
    expect(await counts()).toEqual({ ...(await truth()), keflavik: 60, stavanger: 60 });
    await expect(
      p.$transaction(async (tx) => {
        await tx.device.create({ data: { siteId: sites.keflavik!, name: "rolled-back", netboxStatus: "planned" } });
        throw new Error("abandon");
      }),
    ).rejects.toThrow("abandon");
    expect(await counts()).toEqual({ keflavik: 60, stavanger: 60, fleet: 120 });
    // A new site's list counts from zero.
    const { id } = await api<{ id: string }>("/api/v1/sites/", {
      method: "POST",
      body: JSON.stringify({ slug: "empty", name: "Empty" }),
    });
    expect((await api<Page<Device>>(`/api/v1/devices/?site=${id}`)).count).toBe(0);
  });

  it("a first NetBox load of a site leaves the planner fresh statistics", async () => {
    const { id: siteId } = await api<{ id: string }>("/api/v1/sites/", {
      method: "POST",
      body: JSON.stringify({ slug: "bulk", name: "Bulk" }),
    });
    const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites/",
      { method: "POST", body: JSON.stringify({ name: "bulk-sat", siteIds: [siteId], environment: "dev" }) },
    );
    const s = sat.secrets.find((x) => x.agent === "netbox")!;
    const token = await clientToken(hub.url, s.clientId, s.clientSecret);
    const before = await rowsAt();
    const items: NetboxItem[] = Array.from({ length: 1000 }, (_, n) => ({
      netboxId: 5000 + n,
      name: `bulk-${n}`,
      serial: null,
      assetTag: null,
      status: "planned",
      role: { slug: "gpu-node", name: "GPU node", netboxId: 7, deviceClass: "GPU_COMPUTE" },
      deviceType: null,
      location: null,
      rack: null,
      rackPosition: null,
      platformClass: null,
      tags: [],
      bmcAddress: null,
      interfaces: [],
    }));
    const pushed = await api<{ created: number }>(
      `/api/v1/sites/${siteId}/reflections/netbox`,
      { method: "PUT", body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items }) },
      token,
    );
    expect(pushed.created).toBe(1000);
    expect(await plannerRows()).toBe(before + 1000);
  });
});
