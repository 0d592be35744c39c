/**
 * Impairment cordon and release as a user of the API sees it: the health-status agent pushes the
 * site's health, the hub cordons a device critical for 10 minutes and releases it after 30
 * healthy, never touches an operator's cordon, and holds the site instead of cordoning past its
 * limit. The pushes' observedAt is the clock: no test waits.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Device, HealthItem, Site } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";

const MIN = 60_000;
const T0 = new Date("2026-12-03T08:00:00Z").getTime();
const at = (min: number) => new Date(T0 + min * MIN);

interface Site_ {
  hub: TestHub & { url: string; adminToken: string };
  siteId: string;
  agent: string;
  devices: Device[];
}
let open: Site_["hub"] | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** A hub with one site of `size` devices and its health agent's token; at most `limit` impairment cordons. */
async function site(limit: number): Promise<Site_> {
  const probe = await startOAuthTestHub();
  await seedInventory(probe.db.prisma, 5);
  const siteRow = await probe.db.prisma.site.findUniqueOrThrow({ where: { slug: "keflavik" } });
  const size = await probe.db.prisma.device.count({ where: { siteId: siteRow.id } });
  await probe.close();
  // The same seed again, on a hub whose limit is `limit` of the site's devices.
  const hub = await startOAuthTestHub({
    impairment: { cordonAfterMs: 10 * MIN, releaseAfterMs: 30 * MIN, maxSiteFraction: (limit + 0.5) / size },
  });
  open = hub;
  // Observed before the pushes' clock starts: a push never undoes a newer observation.
  await seedInventory(hub.db.prisma, 5, at(-60));
  const siteId = (await hub.db.prisma.site.findUniqueOrThrow({ where: { slug: "keflavik" } })).id;
  const res = await fetch(`${hub.url}/api/v1/satellites`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify({ name: "sys1-ice2", siteIds: [siteId], environment: "prod" }),
  });
  const secret = ((await res.json()) as { secrets: { agent: string; clientSecret: string }[] }).secrets.find(
    (s) => s.agent === "health-status",
  )!.clientSecret;
  const agent = await clientToken(hub.url, "health-status-agent-sys1-ice2", secret);
  const devices = (
    (await (
      await fetch(`${hub.url}/api/v1/devices?site=keflavik&limit=1000`, { headers: bearer(hub.adminToken) })
    ).json()) as { items: Device[] }
  ).items;
  expect(devices).toHaveLength(size);
  return { hub, siteId, agent, devices };
}

const xid = (name: string): HealthItem => ({
  name,
  status: "critical",
  conditions: [{ name: "GpuXidErrors", status: "critical", message: "GPU 2 reported XID 79" }],
});

/** The site's whole health view at `when`: every device ok but those given. */
async function pushHealth(s: Site_, when: Date, sick: HealthItem[] = []): Promise<void> {
  const byName = new Map(sick.map((i) => [i.name, i]));
  const items = s.devices.map((d) => byName.get(d.name) ?? { name: d.name, status: "ok", conditions: [] });
  const res = await fetch(`${s.hub.url}/api/v1/sites/${s.siteId}/reflections/health/`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...bearer(s.agent) },
    body: JSON.stringify({ observedAt: when.toISOString(), complete: true, items }),
  });
  expect(res.status, await res.text()).toBe(200);
}

const get = async <T>(s: Site_, path: string): Promise<T> =>
  (await (await fetch(`${s.hub.url}${path}`, { headers: bearer(s.hub.adminToken) })).json()) as T;
const device = (s: Site_, d: Device) => get<Device>(s, `/api/v1/devices/${d.id}`);

async function operatorCordon(s: Site_, d: Device, reason: string): Promise<void> {
  const current = await fetch(`${s.hub.url}/api/v1/devices/${d.id}`, { headers: bearer(s.hub.adminToken) });
  const res = await fetch(`${s.hub.url}/api/v1/devices/${d.id}`, {
    method: "PATCH",
    headers: {
      "content-type": "application/json",
      "if-match": current.headers.get("etag")!,
      ...bearer(s.hub.adminToken),
    },
    body: JSON.stringify({ cordoned: true, cordonReason: reason }),
  });
  expect(res.status, await res.text()).toBe(200);
}

describe("impairment cordon and release", () => {
  it("cordons a device critical for 10 minutes, naming the condition, and releases it after 30 healthy", async () => {
    const s = await site(2);
    const d = s.devices[0]!;
    await pushHealth(s, at(0), [xid(d.name)]);
    await pushHealth(s, at(9), [xid(d.name)]);
    expect(await device(s, d)).toMatchObject({ cordoned: false, health: { status: "critical" } });

    await pushHealth(s, at(10), [xid(d.name)]);
    expect(await device(s, d)).toMatchObject({
      cordoned: true,
      cordonSource: "impairment",
      cordonReason: "impairment: GpuXidErrors critical since 2026-12-03T08:00:00.000Z",
      cordonedBy: "health-status-agent-sys1-ice2",
    });
    // The list reads rows its own way: it shows the same source.
    const listed = await get<{ items: Device[] }>(s, `/api/v1/devices/?nameExact=${d.name}`);
    expect(listed.items).toMatchObject([{ cordoned: true, cordonSource: "impairment" }]);
    for (const other of s.devices.slice(1)) expect((await device(s, other)).cordoned).toBe(false);

    await pushHealth(s, at(11));
    await pushHealth(s, at(40));
    expect(await device(s, d)).toMatchObject({ cordoned: true, cordonSource: "impairment" });
    await pushHealth(s, at(41));
    expect(await device(s, d)).toMatchObject({ cordoned: false, cordonSource: null, cordonReason: null });

    const history = await get<{ items: { field: string; source: string; newValue: unknown }[] }>(
      s,
      `/api/v1/devices/${d.id}/history/?field=cordoned`,
    );
    expect(history.items.map((h) => [h.source, h.newValue])).toEqual(
      expect.arrayContaining([
        ["impairment", { cordoned: true, reason: expect.stringMatching(/GpuXidErrors/), source: "impairment" }],
        ["impairment", { cordoned: false }],
      ]),
    );
    const audit = await get<{ items: { diff: Record<string, { after: unknown }> }[] }>(
      s,
      `/api/v1/audit/?resourceType=device&resourceId=${d.id}&limit=100`,
    );
    expect(audit.items.map((a) => a.diff.cordonSource?.after).filter(Boolean)).toEqual(["impairment"]);
    const feed = await get<{ items: { type: string; data: Device }[] }>(
      s,
      "/api/v1/feeds/inventory/?after=0&limit=1000",
    );
    const cordons = feed.items.filter((e) => e.type === "device.updated" && e.data.id === d.id);
    expect(cordons.map((e) => e.data.cordonSource)).toContain("impairment");
    expect(cordons.at(-1)!.data).toMatchObject({ cordoned: false });
  });

  it("never releases nor overrides an operator's cordon, and an operator's cordon takes one over", async () => {
    const s = await site(2);
    const [byOperator, takenOver] = s.devices;
    await operatorCordon(s, byOperator!, "RMA ticket 42");
    await pushHealth(s, at(0), [xid(byOperator!.name), xid(takenOver!.name)]);
    await pushHealth(s, at(10), [xid(byOperator!.name), xid(takenOver!.name)]);
    expect(await device(s, byOperator!)).toMatchObject({
      cordoned: true,
      cordonSource: "operator",
      cordonReason: "RMA ticket 42",
    });
    expect(await device(s, takenOver!)).toMatchObject({ cordoned: true, cordonSource: "impairment" });

    await operatorCordon(s, takenOver!, "keep out: reseating GPU 2");
    await pushHealth(s, at(11));
    await pushHealth(s, at(60));
    for (const d of [byOperator!, takenOver!])
      expect(await device(s, d)).toMatchObject({ cordoned: true, cordonSource: "operator" });
    expect(await device(s, takenOver!)).toMatchObject({ cordonReason: "keep out: reseating GPU 2" });
  });

  it("holds the site instead of cordoning past its limit, and lifts the hold when back under it", async () => {
    const s = await site(2);
    const sick = s.devices.slice(0, 3).map((d) => xid(d.name));
    await pushHealth(s, at(0), sick);
    await pushHealth(s, at(10), sick);
    for (const d of s.devices) expect((await device(s, d)).cordoned).toBe(false);
    const held = await get<Site>(s, `/api/v1/sites/${s.siteId}`);
    expect(held.impairmentHold).toEqual({
      since: at(10).toISOString(),
      message: expect.stringMatching(
        /^3 device\(s\) critical long enough to cordon, but 3 impairment cordons would exceed 2/,
      ),
    });
    const audit = await get<{ items: { diff: Record<string, { after: unknown }> }[] }>(
      s,
      `/api/v1/audit/?resourceType=site&resourceId=${s.siteId}&limit=100`,
    );
    expect(audit.items.map((a) => a.diff.impairmentHold?.after)).toContainEqual(held.impairmentHold);

    // Two recover: the one still critical is within the limit.
    await pushHealth(s, at(11), sick.slice(0, 1));
    expect(await device(s, s.devices[0]!)).toMatchObject({ cordoned: true, cordonSource: "impairment" });
    expect((await get<Site>(s, `/api/v1/sites/${s.siteId}`)).impairmentHold).toBeNull();
  });
});
