import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, NetboxItem } from "@fm/domain";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { bearer, clientToken } from "@fm/test-support/process";

let hub: TestHub & { url: string; adminToken: string };
let netbox: string;
let satelliteSecrets: { agent: string; clientId: string; clientSecret: string }[];
let siteId: string;

const api = async <T>(path: string, init: RequestInit = {}) => {
  const res = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: {
      "content-type": "application/json",
      ...bearer(hub.adminToken),
      ...(init.headers as Record<string, string>),
    },
  });
  return { status: res.status, body: (await res.json()) as T };
};

beforeAll(async () => {
  hub = await startOAuthTestHub();
  siteId = (
    await api<{ id: string }>("/api/v1/sites/", {
      method: "POST",
      body: JSON.stringify({ slug: "oslo", name: "Oslo" }),
    })
  ).body.id;
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "/api/v1/satellites/",
    { method: "POST", body: JSON.stringify({ name: "sys9-osl1", siteIds: [siteId], environment: "dev" }) },
  );
  satelliteSecrets = sat.body.secrets;
  const s = sat.body.secrets.find((x) => x.agent === "netbox")!;
  netbox = await clientToken(hub.url, s.clientId, s.clientSecret);
});
afterAll(() => hub.close());

const tray = (n: number, o: Partial<NetboxItem> = {}): NetboxItem => ({
  netboxId: 1000 + n,
  name: `osl1-gb300-${String(n).padStart(3, "0")}`,
  serial: `SN-OSL-${n}`,
  assetTag: null,
  status: "staged",
  role: { slug: "gpu-node", name: "GPU node", netboxId: 7, deviceClass: "GPU_COMPUTE" },
  deviceType: {
    slug: "nvidia-gb300-tray",
    manufacturer: "NVIDIA",
    model: "GB300 NVL72 compute tray",
    cpuArchitecture: "aarch64",
    netboxId: 31,
  },
  location: { slug: "hall-a", name: "Hall A", netboxId: 3 },
  rack: { name: `A0${1 + (n % 2)}`, netboxId: 50 + (n % 2) },
  rackPosition: 10 + n,
  platformClass: null,
  tags: ["gb300"],
  bmcAddress: `10.9.0.${n}`,
  interfaces: [
    {
      name: "eth0",
      type: "100gbase-x-qsfp28",
      macAddress: `7C:C2:55:00:00:${n.toString(16).padStart(2, "0").toUpperCase()}`,
      ibGuid: null,
      mgmtOnly: false,
      peerDevice: "osl1-leaf-01",
      peerInterface: `Ethernet1/${n}`,
      netboxId: 5000 + n * 10,
    },
    {
      name: "bmc",
      type: "1000base-t",
      macAddress: `7C:C2:55:01:00:${n.toString(16).padStart(2, "0").toUpperCase()}`,
      ibGuid: null,
      mgmtOnly: true,
      peerDevice: null,
      peerInterface: null,
      netboxId: 5001 + n * 10,
    },
  ],
  ...o,
});
const hypervisor = (n: number): NetboxItem => ({
  ...tray(100 + n),
  name: `osl1-hv-${n}`,
  role: { slug: "hypervisor", name: "Hypervisor", netboxId: 8, deviceClass: "CPU_HYPERVISOR" },
  deviceType: {
    slug: "dell-r760",
    manufacturer: "Dell",
    model: "PowerEdge R760",
    cpuArchitecture: "x86_64",
    netboxId: 32,
  },
  tags: [],
});

let t = Date.now() - 60_000;
const push = (items: NetboxItem[] | unknown[], token = netbox) =>
  fetch(`${hub.url}/api/v1/sites/${siteId}/reflections/netbox/`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify({ observedAt: new Date((t += 1000)).toISOString(), complete: true, items }),
  });
const devices = async () => (await api<{ items: Device[] }>(`/api/v1/devices/?site=oslo&limit=1000`)).body.items;
const feedCount = async () =>
  (await api<{ items: unknown[] }>(`/api/v1/feeds/inventory/?limit=1000`)).body.items.length;

describe("PUT /api/v1/sites/{site_id}/reflections/netbox", () => {
  const view = [tray(1), tray(2), tray(3), hypervisor(1)];

  it("creates devices with their roles (and device classes), types, locations, racks and interfaces", async () => {
    const res = await push(view);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ created: 4, updated: 0, unchanged: 0, missing: 0, unmatched: 0 });
    const all = await devices();
    expect(all.map((d) => d.name).sort()).toEqual(["osl1-gb300-001", "osl1-gb300-002", "osl1-gb300-003", "osl1-hv-1"]);
    const d1 = all.find((d) => d.name === "osl1-gb300-001")!;
    expect(d1).toMatchObject({
      serial: "SN-OSL-1",
      role: { slug: "gpu-node", deviceClass: "GPU_COMPUTE" },
      deviceType: { slug: "nvidia-gb300-tray", cpuArchitecture: "aarch64" },
      rack: { name: "A02", position: 11 },
      tags: ["gb300"],
      bmcAddress: "10.9.0.1",
      netbox: { id: 1001, status: "staged", missing: false },
    });
    expect(d1.netbox.observedAt).not.toBeNull();
    expect(d1.interfaces).toEqual([
      {
        name: "bmc",
        type: "1000base-t",
        macAddress: "7C:C2:55:01:00:01",
        ibGuid: null,
        mgmtOnly: true,
        peerDevice: null,
        peerInterface: null,
      },
      {
        name: "eth0",
        type: "100gbase-x-qsfp28",
        macAddress: "7C:C2:55:00:00:01",
        ibGuid: null,
        mgmtOnly: false,
        peerDevice: "osl1-leaf-01",
        peerInterface: "Ethernet1/1",
      },
    ]);
    // The OpenStack agent's question: which classes are in use here.
    const roles = (
      await api<{ items: { slug: string; deviceClass: string; deviceCount: number }[] }>(
        `/api/v1/device-roles/?site=oslo&inUse=true`,
      )
    ).body.items;
    expect(roles.map((r) => [r.slug, r.deviceClass, r.deviceCount])).toEqual(
      expect.arrayContaining([
        ["gpu-node", "GPU_COMPUTE", 3],
        ["hypervisor", "CPU_HYPERVISOR", 1],
      ]),
    );
    const events = (await api<{ items: { type: string; resourceId: string }[] }>(`/api/v1/feeds/inventory/?limit=1000`))
      .body.items;
    expect(
      events
        .filter((e) => e.type === "device.created")
        .map((e) => e.resourceId)
        .sort(),
    ).toEqual(all.map((d) => d.id).sort());
  });

  it("a repeated view changes nothing and writes nothing", async () => {
    const before = await devices();
    const events = await feedCount();
    const res = await push(view);
    expect(await res.json()).toMatchObject({ created: 0, updated: 0, unchanged: 4, missing: 0 });
    expect((await devices()).map((d) => d.version)).toEqual(before.map((d) => d.version));
    expect(await feedCount()).toBe(events);
  });

  it("reflects a rename, a MAC change, a role change and a status change, with history and feed events", async () => {
    const before = await devices();
    const id = (name: string) => before.find((d) => d.name === name)!.id;
    const edited = [
      tray(1, { name: "osl1-gb300-001-renamed" }),
      tray(2, {
        interfaces: tray(2).interfaces.map((i) => (i.name === "eth0" ? { ...i, macAddress: "7c:c2:55:aa:bb:cc" } : i)),
      }),
      tray(3, {
        role: { slug: "cpu-node", name: "CPU node", netboxId: 9, deviceClass: "CPU_BAREMETAL" },
        status: "active",
      }),
      hypervisor(1),
    ];
    const events = await feedCount();
    expect(await (await push(edited)).json()).toMatchObject({ created: 0, updated: 3, unchanged: 1, missing: 0 });
    const after = await devices();
    const get = (i: string) => after.find((d) => d.id === i)!;
    expect(get(id("osl1-gb300-001")).name).toBe("osl1-gb300-001-renamed");
    expect(get(id("osl1-gb300-002")).interfaces.find((i) => i.name === "eth0")!.macAddress).toBe("7C:C2:55:AA:BB:CC");
    expect(get(id("osl1-gb300-003"))).toMatchObject({
      role: { slug: "cpu-node", deviceClass: "CPU_BAREMETAL" },
      netbox: { status: "active" },
    });
    const history = (
      await api<{ items: { field: string; oldValue: unknown; newValue: unknown; source: string }[] }>(
        `/api/v1/devices/${id("osl1-gb300-003")}/history/?field=netboxStatus`,
      )
    ).body.items;
    expect(history.at(-1)).toMatchObject({ oldValue: "staged", newValue: "active", source: "netbox" });
    // Three device.updated events and the new role's device_role.created.
    expect(await feedCount()).toBe(events + 4);
  });

  it("marks a device NetBox no longer lists as missing, never deletes it, and restores it when listed again", async () => {
    const current = [
      tray(1, { name: "osl1-gb300-001-renamed" }),
      tray(2, {
        interfaces: tray(2).interfaces.map((i) => (i.name === "eth0" ? { ...i, macAddress: "7C:C2:55:AA:BB:CC" } : i)),
      }),
      tray(3, {
        role: { slug: "cpu-node", name: "CPU node", netboxId: 9, deviceClass: "CPU_BAREMETAL" },
        status: "active",
      }),
    ];
    expect(await (await push(current)).json()).toMatchObject({ created: 0, updated: 0, unchanged: 3, missing: 1 });
    const hv = (await devices()).find((d) => d.name === "osl1-hv-1")!;
    expect(hv.netbox.missing).toBe(true);
    expect(await (await push(current)).json()).toMatchObject({ missing: 0, unchanged: 3 });
    expect(await (await push([...current, hypervisor(1)])).json()).toMatchObject({ updated: 1, missing: 0 });
    expect((await devices()).find((d) => d.name === "osl1-hv-1")!.netbox.missing).toBe(false);
  });

  it("refuses a bad item with 400 and writes nothing; only the netbox agent may push", async () => {
    const before = await devices();
    const bad = await push([tray(7, { interfaces: [{ ...tray(7).interfaces[0]!, macAddress: "not-a-mac" }] })]);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { path: string }[] }).errors[0]!.path).toBe(
      "body.items.0.interfaces.0.macAddress",
    );
    expect((await push([tray(7)], hub.adminToken)).status).toBe(403);
    // Nor any other agent of the satellite serving the site.
    const others = satelliteSecrets.filter((x) => x.agent !== "netbox");
    expect(others.map((x) => x.agent).sort()).toEqual([
      "health-status",
      "openstack",
      "slurm",
      "temporal-worker",
      "workflow",
    ]);
    for (const other of others)
      expect(
        (await push([tray(7)], await clientToken(hub.url, other.clientId, other.clientSecret))).status,
        other.agent,
      ).toBe(403);
    expect((await devices()).map((d) => [d.name, d.version])).toEqual(before.map((d) => [d.name, d.version]));
  });
});

describe("a NetBox push's `site`: NetBox's name and ids of the push's own site", () => {
  type Site = { id: string; slug: string; name: string; netboxSiteId: number | null; netboxClusterId: number | null };
  const pushSite = (site: string, token: string, body: Record<string, unknown>) =>
    fetch(`${hub.url}/api/v1/sites/${site}/reflections/netbox/`, {
      method: "PUT",
      headers: { "content-type": "application/json", ...bearer(token) },
      body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items: [], ...body }),
    });

  it("names the pushed site and sets its NetBox ids (audited, in the feed), once; another site's push cannot touch it", async () => {
    // A site as the hub creates it from its NetBox settings: the slug, nothing from NetBox yet.
    const bergen = (
      await api<Site>("/api/v1/sites/", { method: "POST", body: JSON.stringify({ slug: "bgo9", name: "bgo9" }) })
    ).body;
    const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites/",
      { method: "POST", body: JSON.stringify({ name: "sys9-bgo9", siteIds: [bergen.id], environment: "dev" }) },
    );
    const s = sat.body.secrets.find((x) => x.agent === "netbox")!;
    const agent = await clientToken(hub.url, s.clientId, s.clientSecret);
    const oslo = (await api<Site>(`/api/v1/sites/${siteId}`)).body;
    const updates = async () =>
      (
        await api<{ items: Array<{ type: string; resourceId: string; data: Site }> }>(
          "/api/v1/feeds/inventory/?limit=1000",
        )
      ).body.items.filter((e) => e.type === "site.updated");
    const before = (await updates()).length;

    const site = { name: "Bergen 9", netboxSiteId: 41, netboxClusterId: 7 };
    expect((await pushSite(bergen.id, agent, { site })).status).toBe(200);
    expect((await api<Site>(`/api/v1/sites/${bergen.id}`)).body).toMatchObject({ slug: "bgo9", ...site });
    const events = (await updates()).slice(before);
    expect(events.map((e) => [e.resourceId, e.data.name])).toEqual([[bergen.id, "Bergen 9"]]);
    const audit = await api<{ items: Array<{ action: string; principal: string }> }>(
      `/api/v1/audit/?resourceType=site&resourceId=${bergen.id}&action=site.update`,
    );
    expect(audit.body.items).toEqual([expect.objectContaining({ principal: "netbox-agent-sys9-bgo9" })]);

    // The same again writes nothing.
    expect((await pushSite(bergen.id, agent, { site })).status).toBe(200);
    expect((await updates()).slice(before)).toHaveLength(1);

    // The agent of bgo9 cannot push to Oslo, with or without `site`; Oslo keeps its name and ids.
    expect((await pushSite(siteId, agent, { site: { ...site, name: "Not Oslo" } })).status).toBe(403);
    // (Its sources' silence counts on with the clock: a slow machine crosses a second here.)
    const { name, netboxSiteId, netboxClusterId } = oslo;
    expect((await api<Site>(`/api/v1/sites/${siteId}`)).body).toMatchObject({ name, netboxSiteId, netboxClusterId });

    // `site` is for NetBox pushes and must be whole: 400 naming the field, nothing written.
    const bad = await pushSite(bergen.id, agent, { site: { name: "Bergen 9", netboxSiteId: -1, netboxClusterId: 7 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("body.site");
    expect((await api<Site>(`/api/v1/sites/${bergen.id}`)).body).toMatchObject(site);
  });
});

describe("NetBox names moving between devices", () => {
  const name = (n: number) => tray(n).name;
  const byNetboxId = async () => new Map((await devices()).map((d) => [d.netbox.id, d]));

  it("two devices swapping names in NetBox swap them in the hub, each audited, no 500", async () => {
    expect(await (await push([tray(20), tray(21), tray(22)])).json()).toMatchObject({ created: 3 });
    const { nextAfter } = (await api<{ nextAfter: string }>(`/api/v1/feeds/inventory/?limit=1000`)).body;
    const swapped = [tray(20, { name: name(21) }), tray(21, { name: name(20) }), tray(22)];
    const res = await push(swapped);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ created: 0, updated: 2, unchanged: 1 });
    const now = await byNetboxId();
    expect(now.get(1020)!.name).toBe(name(21));
    expect(now.get(1021)!.name).toBe(name(20));
    const events = (
      await api<{ items: { type: string; resourceId: string }[] }>(`/api/v1/feeds/inventory/?after=${nextAfter}`)
    ).body.items;
    expect(events.map((e) => [e.type, e.resourceId]).sort()).toEqual(
      [
        ["device.updated", now.get(1020)!.id],
        ["device.updated", now.get(1021)!.id],
      ].sort(),
    );
    // The placeholder the swap parks a name on is never seen by a reader.
    expect(JSON.stringify(events)).not.toContain("fm-renaming");
  });

  it("a rename to the name of a device NetBox no longer lists keeps the name, applies the rest, and reports it", async () => {
    // Device 22 leaves NetBox (missing, keeping its name); device 20 is renamed to that name.
    const res = await push([tray(20, { name: name(22), status: "active" }), tray(21, { name: name(20) })]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { conflicts?: unknown[] };
    expect(body).toMatchObject({ missing: 1, updated: 1 });
    expect(body.conflicts).toContainEqual({
      resource: "device",
      slug: name(21),
      field: "name",
      hub: name(21),
      pushed: name(22),
    });
    const now = await byNetboxId();
    expect(now.get(1020)).toMatchObject({ name: name(21), netbox: { status: "active" } });
    expect(now.get(1022)).toMatchObject({ name: name(22), netbox: { missing: true } });
  });
});

describe("NetBox names the hub will not store as they are", () => {
  const name = (n: number) => tray(n).name;
  const byNetboxId = async () => new Map((await devices()).map((d) => [d.netbox.id, d]));
  /** A 400 whose errors name `path`; returns their messages. */
  const refused = async (res: Response, path: string) => {
    const text = await res.text();
    expect(res.status, text).toBe(400);
    const body = JSON.parse(text) as { errors: { path: string; message: string }[] };
    expect(body.errors.map((e) => e.path)).toContain(path);
    return body.errors.map((e) => e.message).join("; ");
  };

  it("a device named like the hub's old parking name (`~fm-renaming~<id>`) is only a name: a swap beside it still applies", async () => {
    expect((await push([tray(23), tray(24)])).status).toBe(200);
    const id23 = (await byNetboxId()).get(1023)!.id;
    // Ids are visible to every reader; this name once collided with the one device 23 is parked
    // under while it is renamed, and every later push answered 500.
    const lookalike = tray(25, { name: `~fm-renaming~${id23}` });
    expect((await push([tray(23), tray(24), lookalike])).status).toBe(200);
    const res = await push([tray(23, { name: name(24) }), tray(24, { name: name(23) }), lookalike]);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ updated: 2, unchanged: 1 });
    const now = await byNetboxId();
    expect([now.get(1023)!.name, now.get(1024)!.name, now.get(1025)!.name]).toEqual([
      name(24),
      name(23),
      `~fm-renaming~${id23}`,
    ]);
  });

  it("names with a control character, a space at an end, or another item's name in another case are refused, naming the item; nothing is applied", async () => {
    const before = JSON.stringify(await devices());
    const view = [tray(23), tray(24)];
    const cases: [NetboxItem, string, RegExp][] = [
      [tray(26, { name: "osl1-\u001b]52;c;cm0gLXJmIH4=\u0007" }), "body.items.2.name", /control character/],
      [tray(26, { name: "osl1-\u001b[2Jgb300-026" }), "body.items.2.name", /control character/],
      [tray(26, { name: "osl1-gb300-026\nosl1-gb300-027" }), "body.items.2.name", /control character/],
      [tray(26, { name: "\u001ffm-renaming:" + "0".repeat(8) }), "body.items.2.name", /control character/],
      [tray(26, { name: `${name(24)} ` }), "body.items.2.name", /white space/],
      [tray(26, { name: name(24).toUpperCase() }), "body.items.2.name", /regardless of case/],
      [tray(26, { rack: { name: "A\u009b01", netboxId: 51 } }), "body.items.2.rack.name", /control character/],
      // Free text too, however JSON spells the character: raw (C1), `\b`, `\f`, `\u001b`.
      [tray(26, { serial: "SN-\u009b2J" }), "body.items.2.serial", /control character/],
      [tray(26, { serial: "SN-\b\b\b" }), "body.items.2.serial", /control character/],
      [tray(26, { assetTag: "AT-\f" }), "body.items.2.assetTag", /control character/],
      [
        tray(26, { tags: ["gb300", "\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\"] }),
        "body.items.2.tags.1",
        /control character/,
      ],
    ];
    for (const [item, path, message] of cases) {
      expect(await refused(await push([...view, item]), path)).toMatch(message);
    }
    expect(JSON.stringify(await devices())).toBe(before);
  });
});

// Last in this file: its pushes carry the real time, which the pushes above (an hour's worth of
// made-up seconds in the past) would then be refused as older than.
describe("a push read before a job's own observation of a device", () => {
  it("does not undo what the job recorded (NetBox status, Ironic node); the next push, read after, does", async () => {
    const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites/",
      { method: "POST", body: JSON.stringify({ name: "sys9-osl2", siteIds: [siteId], environment: "dev" }) },
    );
    const token = (agent: string) => {
      const s = sat.body.secrets.find((x) => x.agent === agent)!;
      return clientToken(hub.url, s.clientId, s.clientSecret);
    };
    const nb = await token("netbox");
    const openstack = await token("openstack");
    const workflow = await token("workflow");
    const worker = await token("temporal-worker");
    const putAt = (source: string, items: unknown[], at: Date, by: string) =>
      fetch(`${hub.url}/api/v1/sites/${siteId}/reflections/${source}/`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(by) },
        body: JSON.stringify({ observedAt: at.toISOString(), complete: true, items }),
      });
    const device = async (id: string) => (await api<Device>(`/api/v1/devices/${id}/`)).body;

    expect((await putAt("netbox", [tray(40)], new Date(), nb)).status).toBe(200);
    const id = (await devices()).find((d) => d.name === tray(40).name)!.id;
    const job = (
      await api<{ id: string }>("/api/v1/jobs/", {
        method: "POST",
        body: JSON.stringify({ kind: "ENROL", deviceIds: [id] }),
      })
    ).body;
    const report = (body: unknown, by: string) =>
      api(`/api/v1/jobs/${job.id}/report/`, { method: "POST", body: JSON.stringify(body), headers: bearer(by) });
    expect((await report({ status: "SUBMITTED", workflowId: job.id }, workflow)).status).toBe(200);

    // The agents read NetBox and Ironic now: the device still staged, its node not made yet.
    const readBefore = new Date();
    await new Promise((r) => setTimeout(r, 20));
    // The ENROL then activates the device in NetBox, makes its Ironic node and reports both.
    const nodeUuid = "0190a5b4-0000-7000-8000-00000000e401";
    const observation = {
      deviceId: id,
      netbox: { status: "active" },
      ironic: {
        instance: "overcloud",
        nodeUuid,
        provisionState: "available",
        targetProvisionState: null,
        powerState: "power off",
        maintenance: false,
        lastError: null,
      },
    };
    expect((await report({ devices: [observation] }, worker)).status).toBe(200);
    // The pushes of what the agents read before arrive after the report: accepted (newer than
    // the site's last push), but the job's newer word on this device stands.
    expect((await putAt("netbox", [tray(40)], readBefore, nb)).status).toBe(200);
    expect((await putAt("ironic-overcloud", [], readBefore, openstack)).status).toBe(200);
    expect(await device(id)).toMatchObject({
      netbox: { status: "active" },
      ironic: { nodeUuid, provisionState: "available" },
    });

    // What the agents read after the job is the sources' word, even where it disagrees.
    const readAfter = new Date();
    expect((await putAt("netbox", [tray(40)], readAfter, nb)).status).toBe(200);
    expect((await putAt("ironic-overcloud", [], readAfter, openstack)).status).toBe(200);
    expect(await device(id)).toMatchObject({ netbox: { status: "staged" }, ironic: { nodeUuid: null } });
  });
});
