/**
 * The NetBox settings as the hub holds them: its configuration at start, the admin API (audited,
 * in the feed, re-classing the roles the mapping names), read-only callers refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NetboxSettings } from "@fm/domain";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { bearer, clientToken } from "@fm/test-support/process";

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
    const site = await call<{ id: string }>("POST", "/api/v1/sites/", { slug: "iad1", name: "iad1" });
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
