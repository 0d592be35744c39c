/**
 * The NetBox stand-in's writes of a node swap, held to NetBox 4.5.0 (SOURCES.md S19): creating a
 * MAC address object, an interface's primary MAC, and moving a device in and out of a rack, with
 * what real NetBox refuses refused the same way and nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { netboxFixture } from "./netbox-fixtures.ts";
import { realisticFleet, startNetboxServer, type NetboxServer } from "./netbox-server.ts";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
let nb: NetboxServer;
beforeAll(async () => {
  nb = await startNetboxServer({ token: TOKEN, data: realisticFleet({ sites: 1, devicesPerSite: 24 }) });
});
afterAll(() => nb?.stop());

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(nb.url + path, {
    method,
    headers: { authorization: `Token ${TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const gpus = () => {
  const role = nb.data.deviceRoles.find((r) => r.slug === "gpu-node")!.id;
  return nb.data.devices.filter((d) => d.role === role);
};
const ifaceOf = (deviceId: number, name: string) =>
  nb.data.interfaces.find((i) => i.device === deviceId && i.name === name)!;

describe("MAC addresses (POST /api/dcim/mac-addresses/)", () => {
  it("creates one assigned to an interface: 201, NetBox's representation, the MAC stored as NetBox writes it", async () => {
    const eth0 = ifaceOf(gpus()[0]!.id, "eth0");
    const res = await call("POST", "/api/dcim/mac-addresses/", {
      mac_address: "7c-fe-90-01-02-0a",
      assigned_object_type: "dcim.interface",
      assigned_object_id: eth0.id,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(netboxFixture("mac-address.json") as object).sort());
    expect(res.body).toMatchObject({
      mac_address: "7C:FE:90:01:02:0A",
      assigned_object_type: "dcim.interface",
      assigned_object_id: eth0.id,
      assigned_object: { id: eth0.id, name: "eth0" },
    });
    // The filter compares MACs, not strings.
    const found = await call("GET", "/api/dcim/mac-addresses/?mac_address=7c:fe:90:01:02:0a");
    expect(found.body.count).toBe(1);
    expect(nb.data.objectChanges.at(-1)).toMatchObject({ action: "create", changed_object_type: "dcim.macaddress" });
  });

  it("keeps no uniqueness on mac_address (as NetBox): the same MAC twice is two objects", async () => {
    const body = { mac_address: "7C:FE:90:01:02:0B" };
    expect((await call("POST", "/api/dcim/mac-addresses/", body)).status).toBe(201);
    expect((await call("POST", "/api/dcim/mac-addresses/", body)).status).toBe(201);
    expect(nb.data.macAddresses.filter((m) => m.mac_address === "7C:FE:90:01:02:0B")).toHaveLength(2);
  });

  it("refuses a malformed MAC, a missing one, an unknown interface and a field it does not have, storing nothing", async () => {
    const before = nb.data.macAddresses.length;
    expect(await call("POST", "/api/dcim/mac-addresses/", { mac_address: "not-a-mac" })).toEqual({
      status: 400,
      body: { mac_address: ["Invalid MAC address format: not-a-mac"] },
    });
    expect(await call("POST", "/api/dcim/mac-addresses/", {})).toEqual({
      status: 400,
      body: { mac_address: ["This field is required."] },
    });
    const unknown = await call("POST", "/api/dcim/mac-addresses/", {
      mac_address: "7C:FE:90:01:02:0C",
      assigned_object_type: "dcim.interface",
      assigned_object_id: 999_999,
    });
    expect(unknown.status).toBe(400);
    expect(
      (await call("POST", "/api/dcim/mac-addresses/", { mac_address: "7C:FE:90:01:02:0C", primary: true })).status,
    ).toBe(400);
    expect(nb.data.macAddresses).toHaveLength(before);
  });

  it("answers 403 without dcim.add_macaddress, while reads still work", async () => {
    nb.revoke(["dcim.add_macaddress"]);
    try {
      expect(await call("POST", "/api/dcim/mac-addresses/", { mac_address: "7C:FE:90:01:02:0D" })).toEqual({
        status: 403,
        body: netboxFixture("error-403-permission-denied.json"),
      });
      expect((await call("GET", "/api/dcim/mac-addresses/?limit=1")).status).toBe(200);
    } finally {
      nb.revoke([]);
    }
    expect((await call("POST", "/api/dcim/mac-addresses/", { mac_address: "7C:FE:90:01:02:0D" })).status).toBe(201);
  });
});

describe("an interface's primary MAC (PATCH primary_mac_address)", () => {
  it("takes a MAC object of that interface, by id, and refuses one assigned to another interface", async () => {
    const [a, b] = gpus();
    const eth1 = ifaceOf(a!.id, "eth1");
    const mine = await call("POST", "/api/dcim/mac-addresses/", {
      mac_address: "7C:FE:90:01:03:01",
      assigned_object_type: "dcim.interface",
      assigned_object_id: eth1.id,
    });
    const patched = await call("PATCH", `/api/dcim/interfaces/${eth1.id}/`, { primary_mac_address: mine.body.id });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      mac_address: "7C:FE:90:01:03:01",
      primary_mac_address: { id: mine.body.id, mac_address: "7C:FE:90:01:03:01" },
    });
    const other = ifaceOf(b!.id, "eth1");
    const refused = await call("PATCH", `/api/dcim/interfaces/${other.id}/`, { primary_mac_address: mine.body.id });
    expect(refused).toEqual({
      status: 400,
      body: {
        primary_mac_address: [`MAC address 7C:FE:90:01:03:01 is assigned to a different interface (eth1).`],
      },
    });
    expect((await call("PATCH", `/api/dcim/interfaces/${other.id}/`, { primary_mac_address: 999_999 })).body).toEqual({
      primary_mac_address: ["Related object not found using the provided numeric ID: 999999"],
    });
  });
});

describe("a device's rack place (PATCH location, rack, position, face)", () => {
  const racked = () => gpus().filter((d) => d.position !== null && d.rack !== null);

  it("refuses units another device holds, a face or position without a rack, a position without a face", async () => {
    const [x, y] = racked();
    const typeOf = nb.data.deviceTypes.find((t) => t.id === y!.device_type)!;
    const taken = await call("PATCH", `/api/dcim/devices/${y!.id}/`, {
      rack: x!.rack,
      position: x!.position,
      face: x!.face,
    });
    expect(taken).toEqual({
      status: 400,
      body: {
        position: [
          `U${x!.position} is already occupied or does not have sufficient space to accommodate this device type: ${typeOf.model} (${typeOf.u_height}U)`,
        ],
      },
    });
    expect((await call("PATCH", `/api/dcim/devices/${y!.id}/`, { rack: null })).body).toEqual({
      face: ["Cannot select a rack face without assigning a rack."],
    });
    expect((await call("PATCH", `/api/dcim/devices/${y!.id}/`, { face: "", position: 3 })).body).toEqual({
      face: ["Must specify rack face when defining rack position."],
    });
    expect((await call("PATCH", `/api/dcim/devices/${y!.id}/`, { rack: 999_999 })).body).toEqual({
      rack: ["Related object not found using the provided numeric ID: 999999"],
    });
    expect(nb.data.devices.find((d) => d.id === y!.id)).toMatchObject({ rack: y!.rack, position: y!.position });
  });

  it("unracks a device (face blank, as NetBox takes it), after which another takes its units", async () => {
    const [x, y] = racked().slice(2);
    const place = { rack: x!.rack, position: x!.position, face: x!.face };
    const out = await call("PATCH", `/api/dcim/devices/${x!.id}/`, {
      rack: null,
      position: null,
      face: "",
      status: "offline",
    });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ rack: null, position: null, face: null, status: { value: "offline" } });
    const moved = await call("PATCH", `/api/dcim/devices/${y!.id}/`, { location: x!.location, ...place });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      rack: { id: place.rack },
      position: place.position,
      face: { value: place.face },
    });
  });
});

describe("cables (POST /api/dcim/cables/, DELETE /api/dcim/cables/{id}/)", () => {
  it("creates a cable between free interfaces (NetBox's representation), refuses a held interface, deletes one (204)", async () => {
    const [a, b] = gpus().slice(8);
    const ia = ifaceOf(a!.id, "ib0");
    const ib = ifaceOf(b!.id, "ib0");
    const made = await call("POST", "/api/dcim/cables/", {
      a_terminations: [{ object_type: "dcim.interface", object_id: ia.id }],
      b_terminations: [{ object_type: "dcim.interface", object_id: ib.id }],
      status: "connected",
      label: "swap-test",
    });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(Object.keys(netboxFixture("cable.json") as object).sort());
    expect(made.body).toMatchObject({
      a_terminations: [{ object_type: "dcim.interface", object_id: ia.id }],
      b_terminations: [{ object_type: "dcim.interface", object_id: ib.id }],
      label: "swap-test",
      status: { value: "connected" },
    });
    const again = await call("POST", "/api/dcim/cables/", {
      a_terminations: [{ object_type: "dcim.interface", object_id: ia.id }],
      b_terminations: [{ object_type: "dcim.interface", object_id: ifaceOf(b!.id, "ib1").id }],
    });
    expect(again).toEqual({
      status: 400,
      body: { __all__: [`Duplicate termination found for dcim.interface ${ia.id}: cable ${made.body.id as number}`] },
    });
    expect(
      (
        await call("POST", "/api/dcim/cables/", {
          a_terminations: [{ object_type: "dcim.interface", object_id: ia.id }],
        })
      ).body,
    ).toEqual({ __all__: ["Must define A and B terminations when creating a new cable."] });
    const res = await fetch(`${nb.url}/api/dcim/cables/${made.body.id as number}/`, {
      method: "DELETE",
      headers: { authorization: `Token ${TOKEN}` },
    });
    expect(res.status).toBe(204);
    expect((await call("GET", `/api/dcim/cables/${made.body.id as number}/`)).status).toBe(404);
    expect((await call("GET", `/api/dcim/interfaces/${ia.id}/`)).body.cable).toBeNull();
  });
});
