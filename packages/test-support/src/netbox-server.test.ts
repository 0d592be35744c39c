/**
 * Holds the NetBox stand-in (netbox-server.ts) to NetBox's real response shapes:
 * for every fixture in fixtures/netbox/ (taken from NetBox 4.5's schema, serializers and
 * docs, see SOURCES.md there), the server's object of the same kind must have the same keys,
 * recursively through nested objects and the first element of arrays, and the same JSON types.
 * A field that is null on one side is not type-checked (NetBox renders empty relations as
 * null), but keys must match exactly, so the stand-in can neither drop nor invent fields.
 */
import { netboxFixture, netboxFixtureNames } from "./netbox-fixtures.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realisticFleet, startNetboxServer, type NetboxServer } from "./netbox-server.ts";

const fixture = (name: string): unknown => netboxFixture(name);
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const auth = { authorization: `Token ${TOKEN}` };

/** Objects whose content is data, not schema: only their type is compared. */
const FREE_FORM = new Set([
  "config_context",
  "local_context_data",
  "prechange_data",
  "postchange_data",
  "data",
  "installed_apps",
  "plugins",
]);

const jsonType = (x: unknown) => (x === null ? "null" : Array.isArray(x) ? "array" : typeof x);

/** Where `actual` differs in shape from `expected`, as readable lines (empty when they agree). */
export function shapeDiff(expected: unknown, actual: unknown, path = "$"): string[] {
  const te = jsonType(expected);
  const ta = jsonType(actual);
  if (te === "null" || ta === "null") return [];
  if (te !== ta) return [`${path}: ${te} in the fixture, ${ta} from the server`];
  if (te === "array") {
    const [e] = expected as unknown[];
    const [a] = actual as unknown[];
    return e !== undefined && a !== undefined ? shapeDiff(e, a, `${path}[0]`) : [];
  }
  if (te !== "object" || FREE_FORM.has(path.split(".").at(-1)!)) return [];
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(e)) if (!(k in a)) out.push(`${path}.${k}: missing from the server`);
  for (const k of Object.keys(a)) if (!(k in e)) out.push(`${path}.${k}: not in the fixture`);
  for (const k of Object.keys(e)) if (k in a) out.push(...shapeDiff(e[k], a[k], `${path}.${k}`));
  return out;
}

let nb: NetboxServer;
beforeAll(async () => {
  nb = await startNetboxServer({
    token: [TOKEN, "nbt_abcdefghijkl.0123456789abcdefghijklmnopqrstuvwxyzABCD"],
    data: realisticFleet({ sites: 3, devicesPerSite: 40 }),
  });
});
afterAll(() => nb?.stop());

async function get(
  path: string,
  headers: Record<string, string> = auth,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(nb.url + path, { headers, redirect: "manual" });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}
async function first(path: string): Promise<Record<string, unknown>> {
  const { status, body } = await get(path);
  expect(status, path).toBe(200);
  const results = body.results as Array<Record<string, unknown>>;
  expect(results.length, `${path} returned nothing`).toBeGreaterThan(0);
  return results[0]!;
}

/** The first GPU tray with its eth0 uplink: a device with every relation populated. */
async function sampleDevice() {
  const device = await first("/api/dcim/devices/?role=gpu-node&limit=1");
  const eth0 = await first(`/api/dcim/interfaces/?device_id=${device.id as number}&name=eth0`);
  return { device, eth0 };
}

describe("the NetBox stand-in answers with NetBox 4.5's shapes", () => {
  const used = new Set<string>();
  const conform = (name: string, actual: unknown) => {
    used.add(name);
    expect(shapeDiff(fixture(name), actual)).toEqual([]);
  };

  it("device list page (envelope and device)", async () => {
    const { status, body } = await get("/api/dcim/devices/?role=gpu-node&limit=1");
    expect(status).toBe(200);
    const fx = fixture("device-list-page.json") as { results: unknown[] };
    expect(Object.keys(body)).toEqual(Object.keys(fx));
    conform("device-list-page.json", body);
  });

  it("interface, MAC address, IP address, cable", async () => {
    const { device, eth0 } = await sampleDevice();
    conform("interface.json", eth0);
    expect(eth0.cable).not.toBeNull();
    expect(eth0.primary_mac_address).not.toBeNull();

    const macs = (await get(`/api/dcim/mac-addresses/?device_id=${device.id as number}`)).body.results as Array<
      Record<string, unknown>
    >;
    conform(
      "mac-address.json",
      macs.find((m) => m.assigned_object_id === eth0.id),
    );

    const ip = await first(`/api/ipam/ip-addresses/?interface_id=${eth0.id as number}`);
    conform("ip-address.json", ip);

    const cable = await first(`/api/dcim/cables/?id=${(eth0.cable as { id: number }).id}`);
    conform("cable.json", cable);
  });

  it("site, location, rack, device type, device role, cluster, tag, config context, status", async () => {
    conform("site.json", await first("/api/dcim/sites/?id=1"));
    conform("location.json", await first("/api/dcim/locations/?id=1"));
    conform("rack.json", await first("/api/dcim/racks/?id=1"));
    conform("device-type.json", await first("/api/dcim/device-types/?slug=gb300-nvl72-compute-tray"));
    conform("device-role.json", await first("/api/dcim/device-roles/?slug=gpu-node"));
    conform("cluster.json", await first("/api/virtualization/clusters/?id=1"));
    conform("tag.json", await first("/api/extras/tags/?slug=fleet-managed"));
    conform("config-context.json", await first("/api/extras/config-contexts/?name=gb300-firmware"));
    conform("status.json", (await get("/api/status/")).body);
  });

  it("object change, after a PATCH", async () => {
    const { device } = await sampleDevice();
    const res = await fetch(`${nb.url}/api/dcim/devices/${device.id as number}/`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ status: "offline" }),
    });
    expect(res.status).toBe(200);
    const change = await first("/api/core/object-changes/?limit=1");
    conform("object-change.json", change);
    expect(change).toMatchObject({
      action: { value: "update", label: "Updated" },
      changed_object_type: "dcim.device",
      changed_object_id: device.id,
      request_id: res.headers.get("x-request-id"),
    });
    expect((change.prechange_data as Record<string, unknown>).status).toBe("active");
    expect((change.postchange_data as Record<string, unknown>).status).toBe("offline");
  });

  it("403 bodies: no credentials, a bad token, a missing permission", async () => {
    const none = await get("/api/dcim/devices/", {});
    expect(none.status).toBe(403);
    expect(none.body).toEqual(fixture("error-403-not-authenticated.json"));
    used.add("error-403-not-authenticated.json");

    const bad = await get("/api/dcim/devices/", { authorization: "Bearer nbt_abcdefghijkl.wrong" });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual(fixture("error-403-invalid-token.json"));
    used.add("error-403-invalid-token.json");
    expect(
      (await get("/api/dcim/devices/", { authorization: "Token ffffffffffffffffffffffffffffffffffffffff" })).body,
    ).toEqual({ detail: "Invalid v1 token" });
    // 4.5 takes the version from the nbt_ prefix, not from the keyword: either keyword works.
    expect((await get("/api/dcim/devices/", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await get("/api/dcim/devices/", { authorization: "Bearer nbt_nodot" })).body).toEqual({
      detail:
        "Invalid authorization header: Could not parse key from v2 token. Did you mean to use 'Token' instead of 'Bearer'?",
    });
    expect((await get("/api/dcim/devices/", { authorization: `Token ${TOKEN} extra` })).body).toEqual({
      detail: 'Invalid authorization header: Must be in the form "Bearer <key>.<token>" or "Token <token>"',
    });
    expect(
      (
        await get("/api/dcim/devices/", {
          authorization: "Bearer nbt_abcdefghijkl.0123456789abcdefghijklmnopqrstuvwxyzABCD",
        })
      ).status,
    ).toBe(200);

    nb.setDenied(["dcim.macaddress"]);
    try {
      const denied = await get("/api/dcim/mac-addresses/");
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual(fixture("error-403-permission-denied.json"));
      used.add("error-403-permission-denied.json");
      expect((await get("/api/dcim/mac-addresses/1/")).status).toBe(403);
      expect((await get("/api/dcim/interfaces/?limit=1")).status).toBe(200);
    } finally {
      nb.setDenied([]);
    }
  });

  it("pagination: envelope, absolute next/previous links in DRF's form, limits", async () => {
    const page1 = await get("/api/dcim/devices/");
    const fx1 = fixture("list-envelope.json") as Record<string, unknown>;
    used.add("list-envelope.json");
    expect(Object.keys(page1.body)).toEqual(Object.keys(fx1));
    expect(shapeDiff(fx1, page1.body)).toEqual([]);
    const onServer = (link: unknown) => (typeof link === "string" ? link.replace("http://netbox", nb.url) : link);
    expect(page1.body).toMatchObject({ count: 120, next: onServer(fx1.next), previous: null });
    expect(page1.body.results).toHaveLength(50); // PAGINATE_COUNT

    const page2 = await get("/api/dcim/devices/?limit=50&offset=50");
    const fx2 = fixture("list-envelope-page2.json") as Record<string, unknown>;
    used.add("list-envelope-page2.json");
    expect(page2.body).toMatchObject({ count: 120, next: onServer(fx2.next), previous: onServer(fx2.previous) });

    const last = await get("/api/dcim/devices/?limit=50&offset=100");
    expect(last.body).toMatchObject({ next: null, previous: `${nb.url}/api/dcim/devices/?limit=50&offset=50` });
    expect(last.body.results).toHaveLength(20);

    // Query keys come back sorted (DRF's replace_query_param), repeated values kept.
    const filtered = await get("/api/dcim/devices/?site_id=2&site_id=1&limit=5");
    expect(filtered.body.next).toBe(`${nb.url}/api/dcim/devices/?limit=5&offset=5&site_id=2&site_id=1`);

    // MAX_PAGE_SIZE caps the limit; limit=0 means "as many as allowed"; a bad limit means the default.
    expect(((await get("/api/dcim/interfaces/?limit=5000")).body.results as unknown[]).length).toBe(1000);
    expect(((await get("/api/dcim/interfaces/?limit=0")).body.results as unknown[]).length).toBe(1000);
    expect(((await get("/api/dcim/interfaces/?limit=abc")).body.results as unknown[]).length).toBe(50);
    expect((await get("/api/dcim/devices/?offset=1000")).body).toMatchObject({ count: 120, results: [] });
  });

  it("cable type is the bare choice value; prechange/postchange data are {} when absent and without change-tracking keys", async () => {
    const cable = await first("/api/dcim/cables/?limit=1");
    expect(cable.type).toBe("mmf-om4");
    const { device } = await sampleDevice();
    nb.edit("dcim.device", device.id as number, "delete");
    const change = await first(`/api/core/object-changes/?changed_object_id=${device.id as number}&action=delete`);
    expect(change.postchange_data).toEqual({});
    expect(change.prechange_data).not.toHaveProperty("last_updated");
    expect(change.prechange_data).not.toHaveProperty("created");
  });

  it("nested objects carry no related-object counts, except the defaults of roles and locations", async () => {
    const { device } = await sampleDevice();
    expect(device.device_type).not.toHaveProperty("device_count");
    expect((device.device_type as Record<string, unknown>).manufacturer).not.toHaveProperty("devicetype_count");
    expect(device.rack).not.toHaveProperty("device_count");
    expect(device.cluster).not.toHaveProperty("virtualmachine_count");
    expect(device.role).toMatchObject({ device_count: 0, virtualmachine_count: 0 });
    expect(device.location).toMatchObject({ rack_count: 0 });
    const role = await first("/api/dcim/device-roles/?slug=gpu-node");
    expect(role.device_count).toBe(nb.data.devices.filter((d) => d.role === role.id).length);
  });

  it("every fixture is checked", () => {
    const all = netboxFixtureNames();
    expect(all.filter((f) => !used.has(f))).toEqual([]);
  });
});

describe("the NetBox stand-in filters as NetBox does", () => {
  const ids = async (path: string) => ((await get(path)).body.results as Array<{ id: number }>).map((r) => r.id);
  const count = async (path: string) => (await get(path)).body.count as number;

  it("ORs repeated values and ANDs different filters", async () => {
    const d = nb.data.devices;
    expect(await count("/api/dcim/devices/?role=gpu-node&role=hypervisor")).toBe(
      d.filter((x) => x.role === 1 || x.role === 3).length,
    );
    expect(await count("/api/dcim/devices/?role=gpu-node&site_id=2")).toBe(
      d.filter((x) => x.role === 1 && x.site === 2).length,
    );
    expect(await ids("/api/dcim/devices/?id=3&id=5")).toEqual([3, 5]);
  });

  it("rejects malformed or unknown values with NetBox's 400 body, and ignores unknown parameters", async () => {
    expect(await get("/api/dcim/devices/?site_id=abc")).toMatchObject({
      status: 400,
      body: { site_id: ["\u201cabc\u201d is not a valid value."] },
    });
    expect(await get("/api/dcim/devices/?cluster_id=999")).toMatchObject({
      status: 400,
      body: { cluster_id: ["Select a valid choice. 999 is not one of the available choices."] },
    });
    expect(await get("/api/dcim/devices/?status=broken")).toMatchObject({
      status: 400,
      body: { status: ["Select a valid choice. broken is not one of the available choices."] },
    });
    expect(await get("/api/dcim/devices/?last_updated__gte=yesterday")).toMatchObject({
      status: 400,
      body: { last_updated__gte: ["Enter a valid date/time."] },
    });
    expect(await get("/api/dcim/mac-addresses/?device_id=x")).toMatchObject({
      status: 400,
      body: { device_id: ["Enter a number."] },
    });
    // No site filter on MAC addresses in NetBox: the parameter is ignored, everything comes back.
    expect(await count("/api/dcim/mac-addresses/?site_id=1")).toBe(nb.data.macAddresses.length);
    expect(await count("/api/dcim/devices/?colour=blue")).toBe(nb.data.devices.length);
  });

  it("serves details, 404s, and redirects a path without its trailing slash", async () => {
    expect((await get("/api/dcim/devices/3/")).body).toMatchObject({ id: 3 });
    expect(await get("/api/dcim/devices/99999/")).toMatchObject({
      status: 404,
      body: { detail: "No Device matches the given query." },
    });
    const res = await fetch(`${nb.url}/api/dcim/devices`, { headers: auth, redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/api/dcim/devices/");
    expect((await get("/api/dcim/sites/")).headers.get("api-version")).toBe("4.5");
  });
});
