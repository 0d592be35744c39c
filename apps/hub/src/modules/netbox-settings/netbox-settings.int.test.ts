/**
 * The NetBox settings as the hub holds them: its configuration at start, the admin API (audited,
 * in the feed, re-classing the roles the mapping names), read-only callers refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NetboxSettings } from "@fm/domain";
import { startOAuthTestHub, startTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";
import { buildApp } from "../../app.ts";
import { hubLogger } from "../../lib/log.ts";
import { bearer, clientToken } from "@fm/test-support/process";
import { reconcileExpectedSatellites } from "../identity/bootstrap.ts";

let hub: TestHub & { url: string; adminToken: string };
async function call<T>(method: string, path: string, body?: unknown, token = hub.adminToken) {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T & Record<string, unknown> };
}

beforeAll(async () => {
  hub = await startOAuthTestHub({
    netboxSettings: {
      deviceFilters: [{ site: "iad1", clusters: ["iad1-compute"] }],
      deviceRoleClassMapping: { "gpu-node": "GPU_COMPUTE" },
    },
  });
});
afterAll(() => hub.close());

describe("NetBox settings", () => {
  it("serves the configuration's settings, and an admin's change is audited, in the feed, and re-classes the role", async () => {
    const first = await call<NetboxSettings>("GET", "/api/v1/netbox/settings");
    expect(first.body).toMatchObject({
      deviceFilters: [{ site: "iad1", clusters: ["iad1-compute"] }],
      deviceRoleClassMapping: { "gpu-node": "GPU_COMPUTE" },
    });

    // A role the NetBox agents created: the mapping of the hub decides its class from now on.
    // The site the configuration names exists from the start.
    const found = await call<{ items: { id: string }[] }>("GET", "/api/v1/sites/?slug=iad1");
    const site = { body: found.body.items[0]! };
    const sat = await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "POST",
      "/api/v1/satellites/",
      { name: "sys9-iad1", siteIds: [site.body.id], environment: "dev" },
    );
    const nb = sat.body.secrets.find((s) => s.agent === "netbox")!;
    const agent = await clientToken(hub.url, nb.clientId, nb.clientSecret);
    const push = await call(
      "PUT",
      `/api/v1/sites/${site.body.id}/reflections/netbox/`,
      {
        observedAt: new Date().toISOString(),
        complete: true,
        items: [
          {
            netboxId: 1,
            name: "iad1-st-1",
            serial: null,
            assetTag: null,
            status: "staged",
            role: { slug: "storage-node", name: "Storage", netboxId: 4, deviceClass: "OTHER" },
            deviceType: null,
            location: null,
            rack: null,
            rackPosition: null,
            platformClass: null,
            tags: [],
            bmcAddress: null,
            interfaces: [],
          },
        ],
      },
      agent,
    );
    expect(push.status).toBe(200);
    // The agent may read the settings (it needs them), not change them.
    expect((await call("GET", "/api/v1/netbox/settings", undefined, agent)).status).toBe(200);
    const refused = await call("PUT", "/api/v1/netbox/settings", first.body, agent);
    expect(refused.status).toBe(403);

    const next = {
      deviceFilters: [
        { site: "iad1", clusters: ["iad1-compute", "iad1-storage"] },
        { site: "lon1", clusters: ["lon1-compute"] },
      ],
      deviceRoleClassMapping: { "gpu-node": "GPU_COMPUTE", "storage-node": "STORAGE" },
    };
    const put = await call<NetboxSettings>("PUT", "/api/v1/netbox/settings", next);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ...next, version: first.body.version + 1 });
    expect((await call<NetboxSettings>("GET", "/api/v1/netbox/settings")).body).toEqual(put.body);

    const roles = await call<{ items: Array<{ slug: string; deviceClass: string }> }>("GET", "/api/v1/device-roles/");
    expect(roles.body.items.find((r) => r.slug === "storage-node")).toMatchObject({ deviceClass: "STORAGE" });
    const audit = await call<{ items: Array<{ action: string; actor: string }> }>(
      "GET",
      "/api/v1/audit/?resourceType=netbox_settings&limit=10",
    );
    expect(audit.body.items.map((a) => a.action)).toEqual(["netbox_settings.update", "netbox_settings.update"]);
    const feed = await call<{ items: Array<{ type: string; data: Record<string, unknown> }> }>(
      "GET",
      "/api/v1/feeds/inventory/?limit=1000",
    );
    const types = feed.body.items.map((e) => e.type);
    expect(types.filter((t) => t === "netbox_settings.updated")).toHaveLength(2);
    expect(feed.body.items.filter((e) => e.type === "device_role.updated").at(-1)?.data).toMatchObject({
      slug: "storage-node",
      deviceClass: "STORAGE",
    });
  });

  it("refuses a malformed change with a 400 naming the field, and changes nothing", async () => {
    const before = (await call<NetboxSettings>("GET", "/api/v1/netbox/settings")).body;
    for (const bad of [
      { deviceFilters: [{ site: "iad1", clusters: [] }], deviceRoleClassMapping: {} },
      {
        deviceFilters: [
          { site: "iad1", clusters: ["a"] },
          { site: "iad1", clusters: ["b"] },
        ],
        deviceRoleClassMapping: {},
      },
      { deviceFilters: [], deviceRoleClassMapping: { "gpu-node": "GPU" } },
    ]) {
      const r = await call("PUT", "/api/v1/netbox/settings", bad);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(/^body\.device/) })]),
      );
    }
    expect((await call<NetboxSettings>("GET", "/api/v1/netbox/settings")).body).toEqual(before);
  });
});

describe("a site the NetBox settings name that the hub does not have", () => {
  type Site = { id: string; slug: string; name: string; netboxSiteId: number | null };
  type Feed = { items: Array<{ type: string; resourceId: string; data: Record<string, unknown> }> };
  type Audit = { items: Array<{ action: string; principal: string; resourceId: string }> };

  it("is created from the configuration at start (audited, in the feed), so an expected satellite naming it is created too; and by an admin's PUT", async () => {
    const own = await startOAuthTestHub({
      netboxSettings: { deviceFilters: [{ site: "fra9", clusters: ["fra9-compute"] }], deviceRoleClassMapping: {} },
    });
    try {
      const get = async <T>(path: string) =>
        (await (await fetch(`${own.url}${path}`, { headers: bearer(own.adminToken) })).json()) as T;
      const [fra9] = (await get<{ items: Site[] }>("/api/v1/sites/?slug=fra9")).items;
      expect(fra9).toMatchObject({ slug: "fra9", name: "fra9", netboxSiteId: null });
      const feed = await get<Feed>("/api/v1/feeds/inventory/?limit=1000");
      expect(feed.items.filter((e) => e.type === "site.created").map((e) => e.data.slug)).toEqual(["fra9"]);
      const audit = await get<Audit>("/api/v1/audit/?resourceType=site&limit=10");
      expect(audit.items).toEqual([
        expect.objectContaining({ action: "site.create", principal: "hub-configuration", resourceId: fra9!.id }),
      ]);

      // main() reconciles FM_EXPECTED_SATELLITES once the app is ready: the site is there by then.
      await reconcileExpectedSatellites(
        own.db.prisma,
        own.app.identity.satellites,
        [{ name: "sys9-fra9", sites: ["fra9"], environment: "dev" }],
        own.app.log,
      );
      const sat = await get<{ siteIds: string[] }>("/api/v1/satellites/sys9-fra9");
      expect(sat.siteIds).toEqual([fra9!.id]);

      const put = await fetch(`${own.url}/api/v1/netbox/settings`, {
        method: "PUT",
        headers: { ...bearer(own.adminToken), "content-type": "application/json" },
        body: JSON.stringify({
          deviceFilters: [
            { site: "fra9", clusters: ["fra9-compute"] },
            { site: "ams9", clusters: ["ams9-compute"] },
          ],
          deviceRoleClassMapping: {},
        }),
      });
      expect(put.status).toBe(200);
      const [ams9] = (await get<{ items: Site[] }>("/api/v1/sites/?slug=ams9")).items;
      expect(ams9).toMatchObject({ slug: "ams9", name: "ams9" });
      const after = await get<Feed>("/api/v1/feeds/inventory/?limit=1000");
      expect(after.items.filter((e) => e.type === "site.created").map((e) => e.data.slug)).toEqual(["fra9", "ams9"]);
      const audited = await get<Audit>(`/api/v1/audit/?resourceType=site&resourceId=${ams9!.id}`);
      expect(audited.items).toEqual([expect.objectContaining({ action: "site.create", principal: "fleet-admin" })]);
    } finally {
      await own.close();
    }
  });

  it("is created at the next start when the settings were applied before and the site is gone", async () => {
    const settings = { deviceFilters: [{ site: "osl9", clusters: ["osl9-compute"] }], deviceRoleClassMapping: {} };
    const identity = testIdentity();
    const own = await startTestHub({ netboxSettings: settings, identity });
    try {
      await own.app.ready();
      const first = await own.db.prisma.site.findUniqueOrThrow({ where: { slug: "osl9" } });
      // A settings row applied by an earlier hub (or a site an admin deleted): the configuration is unchanged.
      await own.db.prisma.site.delete({ where: { id: first.id } });
      const restarted = await buildApp({
        prisma: own.db.prisma,
        logger: hubLogger("silent"),
        identity,
        netboxSettings: settings,
      });
      await restarted.ready();
      await restarted.close();
      const again = await own.db.prisma.site.findUnique({ where: { slug: "osl9" } });
      expect(again).toMatchObject({ slug: "osl9", name: "osl9" });
      const created = await own.db.prisma.auditLog.findMany({ where: { resourceType: "site", action: "site.create" } });
      expect(created.map((a) => a.resourceId)).toEqual([first.id, again!.id]);
    } finally {
      await own.close();
    }
  });
});
