/**
 * The NODE_SWAP activities under Temporal's MockActivityEnvironment, against the NetBox test
 * server and a test Redfish BMC: the MACs a spare's BMC reports, their NetBox MAC address
 * objects and primary MACs (created once, reused on a rerun, refused when recorded elsewhere or
 * when the token may not add them), and the rack move.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HubClient, NetboxClient, cableMovesOf } from "@fm/clients";
import type { DeviceRecord, NetboxServer } from "@fm/test-support/netbox-server";
import { startNetboxServer } from "@fm/test-support/netbox-server";
import { startRedfishBmc, type RedfishBmc } from "@fm/test-support/redfish";
import { NETBOX_TOKEN, activityFleet, expectFinal, gpuServers, plan, rejection, run } from "./activity-testing.ts";
import { directoryCredentials } from "./bmc-credentials.ts";
import { nodeSwapActivities } from "./node-swap.ts";

const PASSWORD = "swap-bmc-password";
let nb: NetboxServer;
let gpus: ReturnType<typeof gpuServers>;
let bmc: RedfishBmc;
let credsDir: string;

beforeAll(async () => {
  nb = await startNetboxServer({ token: NETBOX_TOKEN, data: activityFleet() });
  gpus = gpuServers(nb);
  bmc = await startRedfishBmc({
    username: "admin",
    password: PASSWORD,
    host: "127.0.0.60",
    ethernetInterfaces: [
      { id: "eth0", mac: "7c:fe:90:aa:00:01" },
      { id: "eth1", mac: "7c:fe:90:aa:00:02" },
      { id: "ToManager", mac: "7c:fe:90:aa:00:ff" },
    ],
  });
  credsDir = await mkdtemp(join(tmpdir(), "fm-swap-creds-"));
  await mkdir(join(credsDir, "site-bmc"));
  await writeFile(join(credsDir, "site-bmc", "username"), "admin");
  await writeFile(join(credsDir, "site-bmc", "password"), PASSWORD);
});
afterAll(async () => {
  await nb?.stop();
  await bmc?.stop();
  if (credsDir) await rm(credsDir, { recursive: true, force: true });
});

const activities = () =>
  nodeSwapActivities({
    site: "iad1",
    // swapPlan reads the hub; these tests exercise the NetBox and BMC activities only.
    hub: new HubClient({ baseUrl: "http://127.0.0.1:1" }),
    netbox: new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 }),
    bmcCredentials: directoryCredentials(credsDir),
    redfish: { addressTemplate: `http://{address}:${bmc.port}`, verifyCa: true },
  });

/** A never-enrolled spare as the swap finds it: staged, its frontend interfaces without MACs, no cables. */
function spareDevice(): DeviceRecord {
  const d = gpus.take("staged");
  const ifaces = nb.data.interfaces.filter((i) => i.device === d.id && !i.mgmt_only);
  const ids = new Set(ifaces.map((i) => i.id));
  nb.data.macAddresses = nb.data.macAddresses.filter((m) => m.interface === null || !ids.has(m.interface));
  for (const i of ifaces) i.primary_mac_address = null;
  uncable(d);
  return d;
}
function uncable(d: DeviceRecord): void {
  const ids = new Set(nb.data.interfaces.filter((i) => i.device === d.id).map((i) => i.id));
  nb.data.cables = nb.data.cables.filter((c) => !c.a.some((x) => ids.has(x)) && !c.b.some((x) => ids.has(x)));
}
const planOf = (d: DeviceRecord) => plan({ name: d.name!, netboxId: d.id, bmcAddress: bmc.host });
/** The MAC objects on the device's frontend (not management-only) interfaces. */
const macsOn = (d: DeviceRecord) => {
  const ids = new Set(nb.data.interfaces.filter((i) => i.device === d.id && !i.mgmt_only).map((i) => i.id));
  return nb.data.macAddresses.filter((m) => m.interface !== null && ids.has(m.interface));
};
const iface = (d: DeviceRecord, name: string) => nb.data.interfaces.find((i) => i.device === d.id && i.name === name)!;

describe("NODE_SWAP activities", () => {
  it("swapBmcMacs reads the spare's NICs from its BMC with the credentials resolved by name, and nothing of them leaves", async () => {
    const d = spareDevice();
    const { result } = await run(activities().swapBmcMacs, planOf(d));
    expect(result).toEqual([
      { id: "eth0", mac: "7c:fe:90:aa:00:01" },
      { id: "eth1", mac: "7c:fe:90:aa:00:02" },
      { id: "ToManager", mac: "7c:fe:90:aa:00:ff" },
    ]);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
    expect(bmc.requests.filter((r) => r.auth === "basic").length).toBeGreaterThan(0);
    expect(bmc.requests.some((r) => r.auth === "rejected")).toBe(false);
  });

  it("swapBmcMacs refuses for good a BMC that refuses the credentials", async () => {
    const d = spareDevice();
    await writeFile(join(credsDir, "site-bmc", "password"), "wrong");
    try {
      expectFinal(
        await rejection(run(activities().swapBmcMacs, planOf(d))),
        "SourceRejected",
        /refused the credentials \(401\)/,
      );
    } finally {
      await writeFile(join(credsDir, "site-bmc", "password"), PASSWORD);
    }
  });

  it("swapNetboxMacs creates the missing MAC objects on the frontend interfaces and makes them primary; a rerun reuses them", async () => {
    const d = spareDevice();
    const macs = (await run(activities().swapBmcMacs, planOf(d))).result;
    const first = await run(activities().swapNetboxMacs, planOf(d), macs);
    expect(first.result).toBe("2 frontend MAC(s): 2 created, 0 reused, 2 primary set");
    const made = macsOn(d);
    expect(made.map((m) => [m.mac_address, nb.data.interfaces.find((i) => i.id === m.interface)!.name]).sort()).toEqual(
      [
        ["7C:FE:90:AA:00:01", "eth0"],
        ["7C:FE:90:AA:00:02", "eth1"],
      ],
    );
    expect(iface(d, "eth0").primary_mac_address).toBe(made.find((m) => m.mac_address.endsWith("01"))!.id);
    expect(iface(d, "eth1").primary_mac_address).toBe(made.find((m) => m.mac_address.endsWith("02"))!.id);

    const posts = nb.requests.filter((r) => r.method === "POST").length;
    const again = await run(activities().swapNetboxMacs, planOf(d), macs);
    expect(again.result).toBe("2 frontend MAC(s): 0 created, 2 reused, 0 primary set");
    expect(macsOn(d)).toHaveLength(2);
    expect(nb.requests.filter((r) => r.method === "POST").length).toBe(posts);
  });

  it("swapNetboxMacs without dcim.add_macaddress fails for good with NetBox's 403 and creates nothing; granted, the rerun creates each once", async () => {
    const d = spareDevice();
    const macs = [
      { id: "eth0", mac: "7c:fe:90:bb:00:01" },
      { id: "eth1", mac: "7c:fe:90:bb:00:02" },
    ];
    nb.revoke(["dcim.add_macaddress"]);
    try {
      expectFinal(await rejection(run(activities().swapNetboxMacs, planOf(d), macs)), "SourceRejected", /403/);
    } finally {
      nb.revoke([]);
    }
    expect(macsOn(d)).toHaveLength(0);
    expect((await run(activities().swapNetboxMacs, planOf(d), macs)).result).toMatch(/2 created/);
    expect(macsOn(d)).toHaveLength(2);
  });

  it("swapNetboxMacs reuses a MAC an attempt created before it could set the primary (no dcim.change_interface), without a duplicate", async () => {
    const d = spareDevice();
    const macs = [{ id: "eth1", mac: "7c:fe:90:cc:00:01" }];
    nb.revoke(["dcim.change_interface"]);
    try {
      expectFinal(await rejection(run(activities().swapNetboxMacs, planOf(d), macs)), "SourceRejected", /403/);
    } finally {
      nb.revoke([]);
    }
    expect(macsOn(d).map((m) => m.mac_address)).toEqual(["7C:FE:90:CC:00:01"]);
    expect(iface(d, "eth1").primary_mac_address).toBeNull();
    expect((await run(activities().swapNetboxMacs, planOf(d), macs)).result).toBe(
      "1 frontend MAC(s): 0 created, 1 reused, 1 primary set",
    );
    expect(macsOn(d)).toHaveLength(1);
    expect(iface(d, "eth1").primary_mac_address).toBe(macsOn(d)[0]!.id);
  });

  it("swapNetboxMacs refuses a MAC NetBox records on another device, before writing any", async () => {
    const d = spareDevice();
    const other = nb.data.macAddresses.find((m) => m.interface !== null)!;
    const before = nb.data.macAddresses.length;
    const err = await rejection(
      run(activities().swapNetboxMacs, planOf(d), [
        { id: "eth0", mac: "7c:fe:90:dd:00:01" },
        { id: "eth1", mac: other.mac_address.toLowerCase() },
      ]),
    );
    const owner = nb.data.interfaces.find((i) => i.id === other.interface)!;
    const ownerDevice = nb.data.devices.find((x) => x.id === owner.device)!;
    expectFinal(err, "BadInput", new RegExp(`recorded in NetBox on ${ownerDevice.name} ${owner.name}: refused`));
    expect(nb.data.macAddresses).toHaveLength(before);
  });

  it("swapNetboxRack takes the failed tray out of its units (kept in its rack) as offline and puts the spare in its rack, unit and face; a rerun changes nothing", async () => {
    let failed = gpus.take("active");
    while (failed.position === null) failed = gpus.take("active");
    uncable(failed);
    const spare = spareDevice();
    const target = { location: failed.location, rack: failed.rack, position: failed.position, face: failed.face };
    const swap = { failed: planOf(failed), spare: planOf(spare), target, moved: false };
    expect((await run(activities().swapNetboxRack, swap)).result).toMatch(/now at rack/);
    expect(nb.data.devices.find((x) => x.id === failed.id)).toMatchObject({
      rack: target.rack,
      position: null,
      face: null,
      status: "offline",
    });
    expect(nb.data.devices.find((x) => x.id === spare.id)).toMatchObject({ ...target, status: "staged" });
    const patches = nb.requests.filter((r) => r.method === "PATCH").length;
    expect((await run(activities().swapNetboxRack, swap)).result).toMatch(/already moved/);
    expect(nb.requests.filter((r) => r.method === "PATCH").length).toBe(patches);
  });

  it("swapNetboxRack puts the failed tray back where it was when NetBox refuses the spare's place, then fails for good", async () => {
    let failed = gpus.take("active");
    while (failed.position === null) failed = gpus.take("active");
    uncable(failed);
    const spare = spareDevice();
    const was = { rack: failed.rack, position: failed.position, face: failed.face, status: failed.status };
    const spareWas = { rack: spare.rack, position: spare.position, face: spare.face };
    // Not a unit NetBox takes (half units at most): the spare's PATCH is a 400.
    const target = {
      location: failed.location,
      rack: failed.rack,
      position: failed.position + 0.25,
      face: failed.face,
    };
    const swap = { failed: planOf(failed), spare: planOf(spare), target, moved: false };
    expectFinal(await rejection(run(activities().swapNetboxRack, swap)), "SourceRejected");
    expect(nb.data.devices.find((x) => x.id === failed.id)).toMatchObject(was);
    expect(nb.data.devices.find((x) => x.id === spare.id)).toMatchObject(spareWas);
  });

  it("swapNetboxCables moves a cabled tray's cables onto the spare's interfaces of the same name; a rerun changes nothing", async () => {
    let failed = gpus.take("active");
    while (failed.position === null) failed = gpus.take("active");
    const spare = spareDevice();
    const client = new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 });
    const ifaces = new Map(nb.data.interfaces.filter((i) => i.device === failed.id).map((i) => [i.id, i.name]));
    const cables = cableMovesOf(await client.cables({ device_id: failed.id }), ifaces);
    expect(cables.map((c) => c.iface).sort()).toEqual(["eth0", "eth1"]);
    const farOf = (name: string) => cables.find((c) => c.iface === name)!.far.map((f) => f.object_id);
    const swap = {
      failed: planOf(failed),
      spare: planOf(spare),
      target: { location: failed.location, rack: failed.rack, position: failed.position, face: failed.face },
      moved: false,
      cables,
    };
    expect((await run(activities().swapNetboxCables, swap)).result).toBe(
      `2 cable(s) on ${spare.name}: 2 moved, 0 already there`,
    );
    const cableOn = (d: DeviceRecord, name: string) => {
      const id = iface(d, name).id;
      return nb.data.cables.filter((c) => c.a.includes(id) || c.b.includes(id));
    };
    for (const name of ["eth0", "eth1"]) {
      expect(cableOn(failed, name)).toEqual([]);
      const [moved] = cableOn(spare, name);
      expect([...moved!.a, ...moved!.b].filter((x) => x !== iface(spare, name).id)).toEqual(farOf(name));
    }
    const count = nb.data.cables.length;
    const posts = nb.requests.filter((r) => r.method === "POST").length;
    expect((await run(activities().swapNetboxCables, swap)).result).toBe(
      `2 cable(s) on ${spare.name}: 0 moved, 2 already there`,
    );
    expect(nb.data.cables).toHaveLength(count);
    expect(nb.requests.filter((r) => r.method === "POST").length).toBe(posts);
    // A cabled swap leaves the failed tray's status alone when it unracks it.
    expect((await run(activities().swapNetboxRack, swap)).result).toMatch(/unracked$/);
    expect(nb.data.devices.find((x) => x.id === failed.id)).toMatchObject({
      rack: swap.target.rack,
      position: null,
      status: "active",
    });
  });
});
