/**
 * Ironic ports from NetBox interfaces, under Temporal's MockActivityEnvironment: the NetBox test
 * server's fleet (GPU trays whose eth0/eth1 uplinks are cabled to leaf switch ports, the leaves
 * with a MAC on their management port) and a real Ironic (fake-hardware). The assertions read
 * Ironic's ports back with raw HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient, NetboxClient } from "@fm/clients";
import { createNode, ironicRequest, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { NETBOX_TOKEN, activityFleet, expectFinal, gpuServers, plan, rejection, run } from "./activity-testing.ts";
import { portActivities } from "./ironic-ports.ts";

let ironic: IronicPeer;
let nb: NetboxServer;
let gpus: ReturnType<typeof gpuServers>;
beforeAll(async () => {
  [ironic, nb] = await Promise.all([startIronic(), startNetboxServer({ token: NETBOX_TOKEN, data: activityFleet() })]);
  gpus = gpuServers(nb);
}, 120_000);
afterAll(async () => {
  await ironic?.stop();
  await nb?.stop();
}, 60_000);

const acts = () =>
  portActivities({
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    netbox: new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 }),
  });

interface RawPort {
  uuid: string;
  address: string;
  node_uuid: string;
  pxe_enabled: boolean;
  local_link_connection: Record<string, string>;
  extra: Record<string, unknown>;
}
const portsOf = async (node: string) =>
  ((await ironicRequest(ironic.url, "GET", `/v1/ports?node=${node}&detail=true`)) as { ports: RawPort[] }).ports;

/** A GPU tray with its Ironic node, and what NetBox says of its interfaces. */
async function tray() {
  const d = gpus.take("staged");
  const node = await createNode(ironic.url, { name: d.name! });
  const ifaces = nb.data.interfaces.filter((i) => i.device === d.id);
  const iface = (name: string) => ifaces.find((i) => i.name === name)!;
  const mac = (name: string) =>
    nb.data.macAddresses.find((m) => m.id === iface(name).primary_mac_address)!.mac_address.toLowerCase();
  /** The leaf port the interface is cabled to, its leaf, and the leaf's management MAC. */
  const peer = (name: string) => {
    const cable = nb.data.cables.find((c) => c.a.includes(iface(name).id))!;
    const port = nb.data.interfaces.find((i) => i.id === cable.b[0])!;
    const leaf = nb.data.devices.find((x) => x.id === port.device)!;
    const mgmt = nb.data.interfaces.find((i) => i.device === leaf.id && i.mgmt_only)!;
    const leafMac = nb.data.macAddresses.find((m) => m.id === mgmt.primary_mac_address)!.mac_address.toLowerCase();
    return { port: port.name, leaf, mgmt, leafMac };
  };
  return { d, node, iface, mac, peer, p: plan({ name: d.name!, netboxId: d.id, ironicNodeUuid: node.uuid }) };
}

describe("ironicPorts", () => {
  it("creates a port per interface with a MAC, linked to its leaf port, the primary-IP NIC pxe-enabled; again, nothing changes", async () => {
    const t = await tray();
    const { result } = await run(acts().ironicPorts, t.p);
    expect(result).toEqual({ created: 3, updated: 0, unchanged: 0 });
    const ports = await portsOf(t.node.uuid);
    const byName = new Map(ports.map((p) => [p.extra.netbox_interface, p]));
    // The BMC (management only) and the InfiniBand ports (no MAC) get no port.
    expect([...byName.keys()].sort()).toEqual(["eno1", "eth0", "eth1"]);
    for (const name of ["eth0", "eth1"]) {
      const peer = t.peer(name);
      expect(byName.get(name)).toMatchObject({
        address: t.mac(name),
        pxe_enabled: name === "eth0", // the fleet puts the tray's primary IPv4 on eth0
        local_link_connection: { switch_id: peer.leafMac, port_id: peer.port, switch_info: peer.leaf.name },
      });
    }
    expect(byName.get("eno1")).toMatchObject({ address: t.mac("eno1"), pxe_enabled: false, local_link_connection: {} });

    expect((await run(acts().ironicPorts, t.p)).result).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(await portsOf(t.node.uuid)).toHaveLength(3);
  }, 60_000);

  it("follows NetBox: the primary IPv4 moved to eth1 moves pxe_enabled, a recabled uplink its local link", async () => {
    const t = await tray();
    await run(acts().ironicPorts, t.p);
    const primary = nb.data.ipAddresses.find((ip) => ip.id === t.d.primary_ip4)!;
    primary.interface = t.iface("eth1").id;
    const cable = nb.data.cables.find((c) => c.a.includes(t.iface("eth0").id))!;
    const spare = nb.data.interfaces.find(
      (i) =>
        i.device === t.peer("eth0").leaf.id &&
        !i.mgmt_only &&
        !nb.data.cables.some((c) => c.b.includes(i.id) || c.a.includes(i.id)),
    )!;
    cable.b = [spare.id];

    expect((await run(acts().ironicPorts, t.p)).result).toEqual({ created: 0, updated: 2, unchanged: 1 });
    const ports = new Map((await portsOf(t.node.uuid)).map((p) => [p.extra.netbox_interface, p]));
    expect(ports.get("eth1")!.pxe_enabled).toBe(true);
    expect(ports.get("eth0")).toMatchObject({ pxe_enabled: false, local_link_connection: { port_id: spare.name } });
  }, 60_000);

  it("refuses a MAC another node's port holds, naming that node, and writes none of the device's ports", async () => {
    const t = await tray();
    const other = await createNode(ironic.url, { name: `${t.d.name}-previous` });
    await ironicRequest(ironic.url, "POST", "/v1/ports", { address: t.mac("eth1"), node_uuid: other.uuid });

    const err = await rejection(run(acts().ironicPorts, t.p));
    expectFinal(
      err,
      "BadInput",
      `the MAC address ${t.mac("eth1")} of ${t.d.name} eth1 is already a port of Ironic node ${t.d.name}-previous`,
    );
    expect(await portsOf(t.node.uuid)).toEqual([]);
  }, 60_000);

  it("refuses a cable to a switch with no management MAC in NetBox, naming the switch", async () => {
    const t = await tray();
    const { leaf, mgmt } = t.peer("eth0");
    const mac = nb.data.macAddresses.find((m) => m.id === mgmt.primary_mac_address)!;
    const saved = mgmt.primary_mac_address;
    mgmt.primary_mac_address = null;
    mac.interface = null;
    try {
      const err = await rejection(run(acts().ironicPorts, t.p));
      expectFinal(
        err,
        "BadInput",
        new RegExp(`^${leaf.name}, which ${t.d.name} eth0 is cabled to, has no MAC address`),
      );
      expect(await portsOf(t.node.uuid)).toEqual([]);
    } finally {
      mgmt.primary_mac_address = saved;
      mac.interface = mgmt.id;
    }
  }, 60_000);
});
