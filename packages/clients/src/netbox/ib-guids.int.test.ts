/**
 * InfiniBand GUIDs from a real Ironic's inspection inventory into the NetBox test server's
 * interface labels: the inventory read (1.81), the plan, and the idempotent apply.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createNode,
  ipaEthernetInterface,
  ipaInfinibandInterface,
  startIronic,
  storeNodeInventory,
  type IronicPeer,
} from "@fm/test-support/ironic";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { IronicClient } from "../ironic/ironic-client.ts";
import { NetboxClient, applyIbGuids, planIbGuids } from "./index.ts";

const V1 = "0123456789abcdef0123456789abcdef01234567";
const GUIDS = [
  "7c:fe:90:03:00:29:26:50",
  "7c:fe:90:03:00:29:26:51",
  "7c:fe:90:03:00:29:26:52",
  "7c:fe:90:03:00:29:26:53",
];

let ironic: IronicPeer;
let nb: NetboxServer;
let netbox: NetboxClient;
let client: IronicClient;

beforeAll(async () => {
  ironic = await startIronic();
  nb = await startNetboxServer({ token: V1, data: realisticFleet({ sites: 1, devicesPerSite: 4 }) });
  netbox = new NetboxClient({ url: nb.url, token: V1, backoffMs: 5 });
  client = new IronicClient({ endpoint: ironic.url, backoffMs: 20 });
}, 60_000);
afterAll(async () => {
  await nb?.stop();
  await ironic?.stop();
});

describe("InfiniBand GUIDs from Ironic's inventory into NetBox labels", () => {
  it("a node without a stored inventory has none (Ironic's 404)", async () => {
    const { uuid } = await createNode(ironic.url, { name: "never-inspected" });
    expect(await client.nodeInventory(uuid)).toBeNull();
  });

  it("writes each port's GUID once: a second run plans and writes nothing", async () => {
    const device = nb.data.devices.find((d) => d.role === 1)!;
    const ifaces = nb.data.interfaces.filter((i) => i.device === device.id);
    const eth = ifaces.find((i) => i.primary_mac_address !== null)!;
    const ethMac = nb.data.macAddresses.find((m) => m.id === eth.primary_mac_address)!.mac_address;
    const { uuid } = await createNode(ironic.url, { name: device.name! });
    await storeNodeInventory(ironic, uuid, [
      ipaEthernetInterface(eth.name, ethMac),
      ...GUIDS.map((g, k) => ipaInfinibandInterface(`ib${k}`, g)),
    ]);
    const inventory = await client.nodeInventory(uuid);
    expect(inventory!.inventory.interfaces.map((i) => [i.name, i.client_id ?? null])).toEqual([
      [eth.name, null],
      ...GUIDS.map((g, k) => [`ib${k}`, `ff:00:00:00:00:00:02:00:00:02:c9:00:${g}`]),
    ]);

    const plan = async () =>
      planIbGuids(
        device.name!,
        (await client.nodeInventory(uuid))!.inventory.interfaces,
        await netbox.interfaces({ device_id: device.id }),
      );
    const first = await plan();
    expect(first.map((r) => [r.interface?.name, r.guid, r.action])).toEqual([
      ["ib0", "7cfe:9003:0029:2650", "write"],
      ["ib1", "7cfe:9003:0029:2651", "write"],
      ["ib2", "7cfe:9003:0029:2652", "write"],
      ["ib3", "7cfe:9003:0029:2653", "write"],
    ]);
    expect(await applyIbGuids(netbox, first)).toBe(4);
    const labels = () => ifaces.filter((i) => i.name.startsWith("ib")).map((i) => i.label);
    expect(labels()).toEqual([
      "7cfe:9003:0029:2650",
      "7cfe:9003:0029:2651",
      "7cfe:9003:0029:2652",
      "7cfe:9003:0029:2653",
    ]);
    const changes = nb.data.objectChanges.length;
    expect(nb.data.objectChanges.slice(-4).map((c) => [c.changed_object_type, c.postchange_data?.label])).toEqual(
      labels().map((l) => ["dcim.interface", l]),
    );

    const second = await plan();
    expect(second.map((r) => r.action)).toEqual(["unchanged", "unchanged", "unchanged", "unchanged"]);
    expect(await applyIbGuids(netbox, second)).toBe(0);
    expect(nb.data.objectChanges).toHaveLength(changes);
  }, 60_000);
});
