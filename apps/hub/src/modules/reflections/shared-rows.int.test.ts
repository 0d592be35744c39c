/**
 * Fleet-wide rows (device roles and types) under NetBox pushes from several sites: the hub's role
 * mapping and the rows' routing fields win over a push, which is told so; every change is audited
 * and in the feed; two sites introducing the same new role at once both succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NetboxItem } from "@fm/domain";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { bearer, clientToken } from "@fm/test-support/process";

let hub: TestHub & { url: string; adminToken: string };
const sites: Array<{ id: string; token: string; slug: string }> = [];

async function api<T>(path: string, init: RequestInit = {}, token = hub.adminToken) {
  const res = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...bearer(token), ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

beforeAll(async () => {
  hub = await startOAuthTestHub({
    netboxSettings: { deviceFilters: [], deviceRoleClassMapping: { "gpu-node": "GPU_COMPUTE" } },
  });
  for (const slug of ["bergen", "trondheim"]) {
    const site = await api<{ id: string }>("/api/v1/sites/", {
      method: "POST",
      body: JSON.stringify({ slug, name: slug }),
    });
    const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites/",
      {
        method: "POST",
        body: JSON.stringify({ name: `sys9-${slug}`, siteIds: [site.body.id], environment: "dev" }),
      },
    );
    const s = sat.body.secrets.find((x) => x.agent === "netbox")!;
    sites.push({ id: site.body.id, slug, token: await clientToken(hub.url, s.clientId, s.clientSecret) });
  }
});
afterAll(() => hub.close());

const item = (site: string, n: number, o: Partial<NetboxItem> = {}): NetboxItem => ({
  netboxId: (site === "bergen" ? 10_000 : 20_000) + n,
  name: `${site}-node-${n}`,
  serial: null,
  assetTag: null,
  status: "staged",
  role: { slug: "gpu-node", name: "GPU node", netboxId: 7, deviceClass: "GPU_COMPUTE" },
  deviceType: {
    slug: "gb300-tray",
    manufacturer: "NVIDIA",
    model: "GB300 tray",
    cpuArchitecture: "aarch64",
    netboxId: 31,
  },
  location: null,
  rack: null,
  rackPosition: null,
  platformClass: null,
  tags: [],
  bmcAddress: null,
  interfaces: [],
  ...o,
});

let t = Date.now() - 600_000;
const push = async (site: (typeof sites)[number], items: NetboxItem[]) => {
  const res = await fetch(`${hub.url}/api/v1/sites/${site.id}/reflections/netbox/`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...bearer(site.token) },
    body: JSON.stringify({ observedAt: new Date((t += 1000)).toISOString(), complete: true, items }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const role = async (slug: string) =>
  (
    await api<{ items: Array<{ slug: string; deviceClass: string }> }>("/api/v1/device-roles/?limit=1000")
  ).body.items.find((r) => r.slug === slug);

describe("fleet-wide rows under NetBox pushes", () => {
  it("a push cannot change a role's device class or a type's CPU architecture: the hub keeps them and says so", async () => {
    const [bergen, trondheim] = sites as [(typeof sites)[0], (typeof sites)[0]];
    const cpu = { slug: "cpu-node", name: "CPU node", netboxId: 9, deviceClass: "CPU_BAREMETAL" } as const;
    expect((await push(bergen, [item("bergen", 1), item("bergen", 2, { role: cpu })])).status).toBe(200);

    const hostile = await push(trondheim, [
      item("trondheim", 1, {
        role: { slug: "gpu-node", name: "GPU node", netboxId: 7, deviceClass: "OTHER" },
        deviceType: {
          slug: "gb300-tray",
          manufacturer: "NVIDIA",
          model: "GB300 tray",
          cpuArchitecture: "x86_64",
          netboxId: 31,
        },
      }),
      item("trondheim", 2, { role: { ...cpu, deviceClass: "OTHER" }, deviceType: null }),
    ]);
    expect(hostile.status).toBe(200);
    expect(hostile.body.conflicts).toEqual([
      { resource: "device_role", slug: "gpu-node", field: "deviceClass", hub: "GPU_COMPUTE", pushed: "OTHER" },
      { resource: "device_role", slug: "cpu-node", field: "deviceClass", hub: "CPU_BAREMETAL", pushed: "OTHER" },
      { resource: "device_type", slug: "gb300-tray", field: "cpuArchitecture", hub: "aarch64", pushed: "x86_64" },
    ]);
    expect(await role("gpu-node")).toMatchObject({ deviceClass: "GPU_COMPUTE" });
    expect(await role("cpu-node")).toMatchObject({ deviceClass: "CPU_BAREMETAL" });
    const types = (await api<{ items: Array<{ slug: string; cpuArchitecture: string }> }>("/api/v1/device-types/")).body
      .items;
    expect(types.find((x) => x.slug === "gb300-tray")).toMatchObject({ cpuArchitecture: "aarch64" });

    // A NetBox rename of the type is NetBox's to make: applied, audited and in the feed.
    const renamed = await push(bergen, [
      item("bergen", 1, {
        deviceType: {
          slug: "gb300-tray",
          manufacturer: "NVIDIA",
          model: "GB300 NVL72 tray",
          cpuArchitecture: "aarch64",
          netboxId: 31,
        },
      }),
    ]);
    expect(renamed.body.conflicts).toEqual([]);
    const audit = (await api<{ items: Array<{ action: string }> }>("/api/v1/audit/?resourceType=device_type&limit=100"))
      .body.items;
    expect(audit.map((a) => a.action).sort()).toEqual(["device_type.create", "device_type.update"]);
    const feed = (
      await api<{ items: Array<{ type: string; data: { model?: string } }> }>("/api/v1/feeds/inventory/?limit=1000")
    ).body.items;
    expect(feed.filter((e) => e.type.startsWith("device_type.")).map((e) => [e.type, e.data.model])).toEqual([
      ["device_type.created", "GB300 tray"],
      ["device_type.updated", "GB300 NVL72 tray"],
    ]);
  });

  it("two sites introducing the same new role and type at the same moment both succeed, and it is created once", async () => {
    const [bergen, trondheim] = sites as [(typeof sites)[0], (typeof sites)[0]];
    for (let round = 0; round < 8; round++) {
      const fresh = (site: string) =>
        item(site, 100 + round, {
          role: { slug: `new-role-${round}`, name: `New ${round}`, netboxId: 500 + round, deviceClass: "STORAGE" },
          deviceType: {
            slug: `new-type-${round}`,
            manufacturer: "Acme",
            model: `S${round}`,
            cpuArchitecture: "x86_64",
            netboxId: 600 + round,
          },
        });
      const answers = await Promise.all([push(bergen, [fresh("bergen")]), push(trondheim, [fresh("trondheim")])]);
      expect(
        answers.map((a) => a.status),
        JSON.stringify(answers.map((a) => a.body)),
      ).toEqual([200, 200]);
    }
    // Created once: one row per new slug, one "created" in the feed and in the audit for each,
    // and both sites' devices point at that one row.
    const roleSlugs = Array.from({ length: 8 }, (_, r) => `new-role-${r}`);
    const typeSlugs = Array.from({ length: 8 }, (_, r) => `new-type-${r}`);
    const roles = (await api<{ items: Array<{ id: string; slug: string }> }>("/api/v1/device-roles/?limit=1000")).body
      .items;
    const types = (await api<{ items: Array<{ id: string; slug: string }> }>("/api/v1/device-types/?limit=1000")).body
      .items;
    const newRoles = roles.filter((r) => r.slug.startsWith("new-role-"));
    const newTypes = types.filter((x) => x.slug.startsWith("new-type-"));
    expect(newRoles.map((r) => r.slug).sort()).toEqual(roleSlugs);
    expect(newTypes.map((x) => x.slug).sort()).toEqual(typeSlugs);

    const feed = (
      await api<{ items: Array<{ type: string; data: { id?: string; slug?: string } }> }>(
        "/api/v1/feeds/inventory/?limit=1000",
      )
    ).body.items;
    const createdInFeed = (type: string, prefix: string) =>
      feed
        .filter((e) => e.type === type && e.data.slug?.startsWith(prefix))
        .map((e) => e.data.slug!)
        .sort();
    expect(createdInFeed("device_role.created", "new-role-")).toEqual(roleSlugs);
    expect(createdInFeed("device_type.created", "new-type-")).toEqual(typeSlugs);

    const createdInAudit = async (resourceType: string, action: string, rows: Array<{ id: string; slug: string }>) => {
      const audit = (
        await api<{ items: Array<{ action: string; resourceId: string }> }>(
          `/api/v1/audit/?resourceType=${resourceType}&limit=1000`,
        )
      ).body.items;
      const ids = new Map(rows.map((r) => [r.id, r.slug]));
      return audit
        .filter((a) => a.action === action && ids.has(a.resourceId))
        .map((a) => ids.get(a.resourceId)!)
        .sort();
    };
    expect(await createdInAudit("device_role", "device_role.create", newRoles)).toEqual(roleSlugs);
    expect(await createdInAudit("device_type", "device_type.create", newTypes)).toEqual(typeSlugs);

    for (let round = 0; round < 8; round++) {
      const role = newRoles.find((r) => r.slug === `new-role-${round}`)!;
      const type = newTypes.find((x) => x.slug === `new-type-${round}`)!;
      for (const site of ["bergen", "trondheim"]) {
        const devices = (
          await api<{ items: Array<{ role: { id: string } | null; deviceType: { id: string } | null }> }>(
            `/api/v1/devices/?nameExact=${site}-node-${100 + round}`,
          )
        ).body.items;
        expect(devices.map((d) => [d.role?.id, d.deviceType?.id])).toEqual([[role.id, type.id]]);
      }
    }
  });
});
