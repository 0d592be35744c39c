/**
 * The NetBox stand-in answers as the release it is set to: the behaviours that changed between
 * 4.2 and 4.5.3 (SOURCES.md in fixtures/netbox/), and patch-panel cable paths.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cableThroughPatchPanels, realisticFleet, startNetboxServer, type NetboxServer } from "./netbox-server.ts";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
let nb: NetboxServer | undefined;
afterEach(async () => {
  await nb?.stop();
  nb = undefined;
});

async function start(version: string, extra: { tokenAllowedIps?: string[] } = {}) {
  nb = await startNetboxServer({
    token: TOKEN,
    version,
    data: realisticFleet({ sites: 1, devicesPerSite: 12 }),
    ...extra,
  });
  return nb;
}
async function call(path: string, init: RequestInit = {}, authorization = `Token ${TOKEN}`) {
  const res = await fetch(nb!.url + path, {
    ...init,
    headers: { authorization, "content-type": "application/json", ...(init.headers as object) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}
const results = (r: { body: Record<string, unknown> }) => r.body.results as Array<Record<string, unknown>>;

describe("the NetBox stand-in at a given release", () => {
  it("reports the release in /api/status/ and API-Version", async () => {
    await start("4.5.3");
    const status = await call("/api/status/");
    expect(status.body["netbox-version"]).toBe("4.5.3");
    expect(status.headers.get("api-version")).toBe("4.5");
  });

  it.each([
    ["4.2.0", 1],
    ["4.5.0", 1],
    ["4.5.3", 2],
  ])("NetBox %s: changed_object_type given twice matches %i type(s)", async (version, types) => {
    const s = await start(version);
    const device = s.data.devices[0]!;
    const iface = s.data.interfaces.find((i) => i.device === device.id)!;
    s.edit("dcim.device", device.id, (d: { description: string }) => (d.description = "moved"));
    s.edit("dcim.interface", iface.id, (i: { description: string }) => (i.description = "re-cabled"));
    const r = await call(
      "/api/core/object-changes/?changed_object_type=dcim.device&changed_object_type=dcim.interface",
    );
    const seen = new Set(results(r).map((c) => c.changed_object_type));
    expect(seen.size).toBe(types);
    // 4.1.0-4.5.2 honour the last value only.
    expect(seen.has("dcim.interface")).toBe(true);
  });

  it.each([
    ["4.2.0", 400],
    ["4.5.0", 200],
  ])("NetBox %s: a PATCH naming an undefined custom field answers %i and stores nothing", async (version, status) => {
    const s = await start(version);
    s.data.customFields["dcim.device"] = [];
    for (const d of s.data.devices) delete d.custom_fields.platform_class;
    const id = s.data.devices[0]!.id;
    const r = await call(`/api/dcim/devices/${id}/`, {
      method: "PATCH",
      body: JSON.stringify({ custom_fields: { platform_class: "gb300" } }),
    });
    expect(r.status).toBe(status);
    if (status === 400)
      expect(r.body).toEqual({ __all__: ["Unknown field name 'platform_class' in custom field data."] });
    else expect(r.body.custom_fields).toEqual({});
    expect(s.data.devices[0]!.custom_fields).not.toHaveProperty("platform_class");
  });

  it("NetBox 4.2 knows only the Token keyword and says 'Invalid token'; 4.5 checks the token's allowed IPs", async () => {
    await start("4.2.0");
    expect((await call("/api/dcim/sites/", {}, "Token 0000000000000000000000000000000000000000")).body).toEqual({
      detail: "Invalid token",
    });
    expect((await call("/api/dcim/sites/", {}, `Bearer ${TOKEN}`)).body).toEqual({
      detail: "Authentication credentials were not provided.",
    });
    await nb!.stop();
    await start("4.5.0", { tokenAllowedIps: ["10.0.0.1"] });
    expect(await call("/api/dcim/sites/")).toMatchObject({
      status: 403,
      body: { detail: "Source IP 127.0.0.1 is not permitted to authenticate using this token." },
    });
  });

  it("renders a path through two patch panels: link peer a front port, far end from connected_endpoints", async () => {
    const s = await start("4.5.0");
    const eth0 = s.data.interfaces.find((i) => s.data.cables.some((c) => c.a.includes(i.id)))!;
    const leafPort = s.data.cables.find((c) => c.a.includes(eth0.id))!.b[0]!;
    const [panelA] = cableThroughPatchPanels(s.data, eth0.id, "pp-r01");
    const iface = (await call(`/api/dcim/interfaces/${eth0.id}/`)).body;
    expect(iface.link_peers_type).toBe("dcim.frontport");
    expect(iface.link_peers).toMatchObject([{ name: "F1", device: { id: panelA, name: "pp-r01-a" } }]);
    expect(iface.connected_endpoints_type).toBe("dcim.interface");
    expect(iface.connected_endpoints).toMatchObject([{ id: leafPort }]);
    expect(iface.connected_endpoints_reachable).toBe(true);
    const cables = results(await call(`/api/dcim/cables/?device_id=${panelA}`));
    expect(
      cables.map((c) =>
        [c.a_terminations, c.b_terminations].map((t) => (t as Array<{ object_type: string }>)[0]!.object_type),
      ),
    ).toEqual([
      ["dcim.interface", "dcim.frontport"],
      ["dcim.rearport", "dcim.rearport"],
    ]);
  });
});
