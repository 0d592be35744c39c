/**
 * `fleetctl netbox populate-ib-guids` as the binary, against a real Ironic (its inspection
 * inventories, as in-band inspection stores them) and the NetBox test server: the dry run
 * changes nothing, --apply writes each InfiniBand GUID into its interface's label once, a second
 * run changes nothing, and a label holding other text is left alone.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createNode,
  ipaEthernetInterface,
  ipaInfinibandInterface,
  startIronic,
  storeNodeInventory,
  type IronicPeer,
} from "@fm/test-support/ironic";
import {
  realisticFleet,
  startNetboxServer,
  type DeviceRecord,
  type InterfaceRecord,
  type NetboxServer,
} from "@fm/test-support/netbox-server";
import { run } from "./fleetctl-env.ts";

const NETBOX_TOKEN = "0123456789abcdef0123456789abcdef01234567";

let home: string;
let clouds: string;
let ironic: IronicPeer;
let nb: NetboxServer;
/** Two GPU nodes of the site, both enrolled and inspected; the second's ib3 carries a hand-written label. */
let devices: DeviceRecord[];

const guid = (d: number, port: number) =>
  `7c:fe:90:03:00:00:${String(d).padStart(2, "0")}:${String(port).padStart(2, "0")}`;
const canonical = (d: number, port: number) =>
  `7cfe:9003:0000:${String(d).padStart(2, "0")}${String(port).padStart(2, "0")}`;
const ibOf = (d: DeviceRecord): InterfaceRecord[] =>
  nb.data.interfaces.filter((i) => i.device === d.id && i.name.startsWith("ib"));
const fleetctl = (...args: string[]) =>
  run(["netbox", "populate-ib-guids", "-d", "lab", "-e", "dev", "--clouds-file", clouds, "--site", "iad1", ...args], {
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    NETBOX_URL: nb.url,
    NETBOX_TOKEN,
  });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "fleetctl-ib-"));
  ironic = await startIronic();
  clouds = join(home, "clouds.yaml");
  await writeFile(clouds, `clouds:\n  ironic:\n    auth_type: none\n    baremetal_endpoint_override: ${ironic.url}\n`);
  nb = await startNetboxServer({ token: NETBOX_TOKEN, data: realisticFleet({ sites: 1, devicesPerSite: 4 }) });
  devices = nb.data.devices.filter((d) => d.role === 1).slice(0, 2);
  for (const [k, d] of devices.entries()) {
    const { uuid } = await createNode(ironic.url, { name: d.name! });
    const eth = nb.data.interfaces.find((i) => i.device === d.id && i.primary_mac_address !== null)!;
    const mac = nb.data.macAddresses.find((m) => m.id === eth.primary_mac_address)!.mac_address;
    await storeNodeInventory(ironic, uuid, [
      ipaEthernetInterface(eth.name, mac),
      ...[0, 1, 2, 3].map((p) => ipaInfinibandInterface(`ib${p}`, guid(k + 1, p))),
    ]);
  }
  // A node Ironic knows that has never been inspected in band.
  await createNode(ironic.url, { name: nb.data.devices.filter((d) => d.role === 1)[2]!.name! });
}, 120_000);
afterAll(async () => {
  await nb?.stop();
  await ironic?.stop();
  await rm(home, { recursive: true, force: true });
});

describe("fleetctl netbox populate-ib-guids", { timeout: 120_000 }, () => {
  it("a dry run prints the labels it would write and writes nothing", async () => {
    const before = nb.data.objectChanges.length;
    const r = await fleetctl();
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^DEVICE\s+PORT\s+GUID\s+INTERFACE\s+LABEL\s+ACTION$/);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${devices[0]!.name}\\s+ib0\\s+${canonical(1, 0)}\\s+ib0\\s+-\\s+would write$`),
      ),
    );
    expect(r.stdout).toContain("8 label(s) to write: run again with --apply to write them.");
    expect(r.stdout).toMatch(/: skipped, Ironic holds no inspection inventory for its node/);
    expect(nb.data.objectChanges).toHaveLength(before);
    expect(devices.flatMap(ibOf).map((i) => i.label)).toEqual(Array(8).fill(""));
  });

  it("--apply writes each GUID into its interface's label once; a second run changes nothing", async () => {
    const before = nb.data.objectChanges.length;
    const r = await fleetctl("--apply");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("8 label(s) written.");
    expect(ibOf(devices[0]!).map((i) => i.label)).toEqual([0, 1, 2, 3].map((p) => canonical(1, p)));
    expect(ibOf(devices[1]!).map((i) => i.label)).toEqual([0, 1, 2, 3].map((p) => canonical(2, p)));
    expect(nb.data.objectChanges.slice(before).map((c) => [c.changed_object_type, c.action])).toEqual(
      Array(8).fill(["dcim.interface", "update"]),
    );

    const again = await fleetctl("--apply", "-o", "json");
    expect(again.code, again.stderr).toBe(0);
    const body = JSON.parse(again.stdout) as { written: number; ports: { action: string }[] };
    expect(body.written).toBe(0);
    expect(body.ports.map((p) => p.action)).toEqual(Array(8).fill("unchanged"));
    expect(nb.data.objectChanges).toHaveLength(before + 8);
  });

  it("a label holding other text is never overwritten, and the run exits 13 saying so", async () => {
    const ib3 = ibOf(devices[1]!)[3]!;
    nb.edit("dcim.interface", ib3.id, (i: InterfaceRecord) => (i.label = "rail 4 to leaf-07"));
    const before = nb.data.objectChanges.length;
    const r = await fleetctl("--apply", "--device", devices[1]!.name!);
    expect(r.code).toBe(13);
    expect(r.stdout).toMatch(
      new RegExp(`ib3\\s+${canonical(2, 3)}\\s+ib3\\s+rail 4 to leaf-07\\s+left alone: the label is not a GUID`),
    );
    expect(ib3.label).toBe("rail 4 to leaf-07");
    expect(nb.data.objectChanges).toHaveLength(before);
  });

  it("bad input is a clear CLI error: no NetBox token, an unknown device", async () => {
    const noToken = await run(["netbox", "populate-ib-guids", "-d", "lab", "-e", "dev", "--clouds-file", clouds], {
      HOME: home,
      NETBOX_URL: nb.url,
    });
    expect(noToken).toMatchObject({ code: 2, stderr: "error: no NetBox token: set NETBOX_TOKEN\n" });
    const unknown = await fleetctl("--device", "no-such-node");
    expect(unknown).toMatchObject({ code: 3, stderr: 'error: Ironic has no node named "no-such-node"\n' });
  });
});
