/**
 * NODE_SWAP end to end, every part a process: the hub, the NetBox test server, a real Ironic
 * (fake-hardware), a real Temporal dev server, the site's netbox agent, workflow agent and
 * Temporal worker, and a test Redfish BMC for the spare reporting its NICs. The worker reads BMC
 * credentials from a mounted-style directory. A never-enrolled spare takes an enrolled failed
 * tray's place: first with a NetBox token that may not add MAC addresses (the swap fails at its
 * MAC step with nothing written to the hub or Ironic), then, granted, again (each MAC created once).
 * Asserted: what the hub's API, NetBox's store and Ironic show.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, DeviceHistoryList, Job, TopologySyncList } from "@fm/domain";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import type { DeviceRecord } from "@fm/test-support/netbox-server";
import { startRedfishBmc, type RedfishBmc } from "@fm/test-support/redfish";

const PASSWORD = `site-${randomBytes(9).toString("hex")}`;
/** The spare's host NICs as its BMC reports them: eth0 and eth1 are its frontend interfaces in NetBox. */
const NICS = [
  { id: "eth0", mac: "7c:fe:90:5a:00:01" },
  { id: "eth1", mac: "7c:fe:90:5a:00:02" },
];
const FAILED = 0;
const SPARE = 1;
/** A cabled (GB300) tray and its spare. */
const CABLED = 2;
const CABLED_SPARE = 3;
const NICS2 = [
  { id: "eth0", mac: "7c:fe:90:5b:00:01" },
  { id: "eth1", mac: "7c:fe:90:5b:00:02" },
];

let s: JobsStack;
let bmc: RedfishBmc;
let bmc2: RedfishBmc;
let failed: Device;
let spare: Device;
/** The failed tray's place in NetBox before the swap. */
let place: Pick<DeviceRecord, "location" | "rack" | "position" | "face">;

beforeAll(async () => {
  bmc = await startRedfishBmc({ username: "admin", password: PASSWORD, host: "127.0.0.80", ethernetInterfaces: NICS });
  bmc2 = await startRedfishBmc({
    username: "admin",
    password: PASSWORD,
    host: "127.0.0.82",
    port: bmc.port,
    ethernetInterfaces: NICS2,
  });
  s = await startJobsStack({
    stagedDevices: 4,
    slurmNodes: 0,
    stagedBmcAddress: (i) => (i === SPARE ? bmc.host : i === CABLED_SPARE ? bmc2.host : `127.0.0.${90 + i}`),
    workerEnv: async ({ dir }) => {
      const creds = join(dir, "bmc-credentials");
      await mkdir(join(creds, "site-bmc"), { recursive: true });
      await writeFile(join(creds, "site-bmc", "username"), "admin");
      await writeFile(join(creds, "site-bmc", "password"), PASSWORD);
      return { BMC_CREDENTIALS_DIR: creds, IRONIC_REDFISH_ADDRESS_TEMPLATE: `http://{address}:${bmc.port}` };
    },
  });
  failed = s.staged[FAILED]!;
  spare = s.staged[SPARE]!;
  const rec = (d: Device) => s.nb.data.devices.find((x) => x.id === d.netbox.id)!;
  // A cableless tray (NVLink, not NetBox cables, says where it sits), and a spare fresh from the
  // vendor: no cables, and no MAC addresses on its frontend interfaces yet.
  for (const d of [failed, spare]) {
    const ids = new Set(s.nb.data.interfaces.filter((i) => i.device === d.netbox.id).map((i) => i.id));
    s.nb.data.cables = s.nb.data.cables.filter((c) => !c.a.some((x) => ids.has(x)) && !c.b.some((x) => ids.has(x)));
  }
  const uncabled = s.staged[CABLED_SPARE]!;
  const ids = new Set(s.nb.data.interfaces.filter((i) => i.device === uncabled.netbox.id).map((i) => i.id));
  s.nb.data.cables = s.nb.data.cables.filter((c) => !c.a.some((x) => ids.has(x)) && !c.b.some((x) => ids.has(x)));
  for (const sp of [spare, uncabled]) {
    const front = s.nb.data.interfaces.filter((i) => i.device === sp.netbox.id && !i.mgmt_only);
    const frontIds = new Set(front.map((i) => i.id));
    s.nb.data.macAddresses = s.nb.data.macAddresses.filter((m) => m.interface === null || !frontIds.has(m.interface));
    for (const i of front) i.primary_mac_address = null;
    // The spare waits unracked in the hall; the failed tray holds a position.
    Object.assign(rec(sp), { rack: null, position: null, face: null });
  }
  const r = rec(failed);
  expect(r.position).not.toBeNull();
  place = { location: r.location, rack: r.rack, position: r.position, face: r.face };
  expect((await s.api("PATCH", `/api/v1/sites/${s.siteId}/`, { region: "us-east-1" })).status).toBe(200);
  expect(rec(s.staged[CABLED]!).position).not.toBeNull();
  const enrol = await s.runJob({ kind: "ENROL", deviceIds: [failed.id, s.staged[CABLED]!.id] });
  expect(enrol.status, JSON.stringify(enrol.error)).toBe("SUCCEEDED");
}, 360_000);
afterAll(async () => {
  await s?.stop();
  await bmc?.stop();
  await bmc2?.stop();
}, 120_000);

const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;
const ironicNode = async (name: string) =>
  ((await ironicRequest(s.ironic.url, "GET", "/v1/nodes?detail=true")) as { nodes: RawIronicNode[] }).nodes.find(
    (n) => n.name === name,
  )!;
const topologyRequests = async () =>
  (await s.api<TopologySyncList>("GET", `/api/v1/sites/${s.siteId}/topology-sync/`)).body.items;
const nbDevice = (d: Device) => s.nb.data.devices.find((x) => x.id === d.netbox.id)!;
/** The MAC address objects NetBox holds for the BMC's MACs, with the interface each is on. */
const bmcMacsInNetbox = () =>
  s.nb.data.macAddresses
    .filter((m) => NICS.some((n) => n.mac.toUpperCase() === m.mac_address))
    .map((m) => ({ mac: m.mac_address, iface: s.nb.data.interfaces.find((i) => i.id === m.interface) }));
const steps = (job: Job) => job.steps.map((st) => `${st.name}:${st.status}`);
const swap = () =>
  s.runJob({ kind: "NODE_SWAP", deviceIds: [failed.id], params: { spareDeviceId: spare.id } }, 120_000);

describe("NODE_SWAP through the workflow agent, Temporal and the worker", () => {
  it("fails at the MAC step when the token may not add MAC addresses, with nothing written to the hub or Ironic", async () => {
    const nodeBefore = await ironicNode(failed.name);
    s.nb.revoke(["dcim.add_macaddress"]);
    let job: Job;
    try {
      job = await swap();
    } finally {
      s.nb.revoke([]);
    }
    expect(job.status).toBe("FAILED");
    expect(steps(job)).toEqual([
      "preflight:SUCCEEDED",
      "validate:SUCCEEDED",
      "bmc-macs:SUCCEEDED",
      "netbox-macs:FAILED",
      "hub-cordon:PENDING",
      "ironic-maintenance:PENDING",
      "netbox-rack:PENDING",
      "netbox-cables:PENDING",
      "topology-sync:PENDING",
      "hub-record:PENDING",
    ]);
    expect(job.error?.message).toMatch(/^netbox-macs: .*403.*/s);
    // The spare's BMC was read (with the site's credentials), NetBox holds no MAC of it yet.
    expect(bmc.requests.some((r) => r.path.endsWith("/EthernetInterfaces") && r.auth === "basic")).toBe(true);
    expect(bmcMacsInNetbox()).toEqual([]);
    // Nothing written to Fleet Manager or Ironic, nothing moved in NetBox. (The device's version
    // may move meanwhile: the netbox agent still records the enrolment it observes.)
    const after = await device(failed.id);
    expect(after.cordoned).toBe(false);
    const history = (await s.api<DeviceHistoryList>("GET", `/api/v1/devices/${failed.id}/history?limit=1000`)).body;
    expect(history.items.filter((h) => h.source === `job:${job.name}`)).toEqual([]);
    const node = await ironicNode(failed.name);
    expect([node.maintenance, node.updated_at]).toEqual([nodeBefore.maintenance, nodeBefore.updated_at]);
    expect(await topologyRequests()).toEqual([]);
    expect(nbDevice(failed)).toMatchObject({ ...place, status: "active" });
  });

  it("may add MACs but not make them primary: the attempt creates the MAC objects and fails there, still before any other write", async () => {
    const nodeBefore = await ironicNode(failed.name);
    const spareBefore = structuredClone(nbDevice(spare));
    const requestsBefore = (await topologyRequests()).length;
    s.nb.revoke(["dcim.change_interface"]);
    let job: Job;
    try {
      job = await swap();
    } finally {
      s.nb.revoke([]);
    }
    expect(job.status).toBe("FAILED");
    expect(steps(job).slice(3, 5)).toEqual(["netbox-macs:FAILED", "hub-cordon:PENDING"]);
    expect(job.error?.message).toMatch(/^netbox-macs: .*403.*/s);
    // The first MAC object made (on the spare's interface of its name), refused as its primary.
    const macs = bmcMacsInNetbox();
    expect(macs.length).toBeGreaterThan(0);
    for (const m of macs) {
      expect([
        ["7C:FE:90:5A:00:01", spare.netbox.id, "eth0"],
        ["7C:FE:90:5A:00:02", spare.netbox.id, "eth1"],
      ]).toContainEqual([m.mac, m.iface?.device, m.iface?.name]);
      expect(m.iface?.primary_mac_address).toBeNull();
    }
    expect((await device(failed.id)).cordoned).toBe(false);
    expect(nbDevice(failed)).toMatchObject({ ...place, status: "active" });
    // Nor anything after the MAC step: Ironic, the spare's own record, the topology requests.
    const node = await ironicNode(failed.name);
    expect([node.maintenance, node.maintenance_reason]).toEqual([
      nodeBefore.maintenance,
      nodeBefore.maintenance_reason,
    ]);
    expect(nbDevice(spare)).toMatchObject({
      location: spareBefore.location,
      rack: spareBefore.rack,
      position: spareBefore.position,
      face: spareBefore.face,
      status: spareBefore.status,
    });
    expect(await topologyRequests()).toHaveLength(requestsBefore);
  });

  it("granted, the rerun reuses the MAC objects the attempt made (one per MAC), moves the spare into the failed tray's place and files the topology-sync request", async () => {
    const job = await swap();
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(steps(job)).toEqual([
      "preflight:SUCCEEDED",
      "validate:SUCCEEDED",
      "bmc-macs:SUCCEEDED",
      "netbox-macs:SUCCEEDED",
      "hub-cordon:SUCCEEDED",
      "ironic-maintenance:SUCCEEDED",
      "netbox-rack:SUCCEEDED",
      "netbox-cables:SKIPPED",
      "topology-sync:SUCCEEDED",
      "hub-record:SUCCEEDED",
    ]);
    // One MAC object per BMC MAC, on the spare's interface of that name, which has it as primary.
    const macs = bmcMacsInNetbox();
    expect(macs.map((m) => [m.mac, m.iface?.device, m.iface?.name]).sort()).toEqual([
      ["7C:FE:90:5A:00:01", spare.netbox.id, "eth0"],
      ["7C:FE:90:5A:00:02", spare.netbox.id, "eth1"],
    ]);
    for (const n of NICS) {
      const i = s.nb.data.interfaces.find((x) => x.device === spare.netbox.id && x.name === n.id)!;
      expect(s.nb.data.macAddresses.find((m) => m.id === i.primary_mac_address)?.mac_address).toBe(n.mac.toUpperCase());
    }
    // Rack locations moved: the spare in the failed tray's rack, unit and face; the failed tray unracked, offline.
    expect(nbDevice(spare)).toMatchObject({ ...place, status: "staged" });
    // Out of its units, kept in its rack (a rerun recognises the move by it), and offline.
    expect(nbDevice(failed)).toMatchObject({ rack: place.rack, position: null, face: null, status: "offline" });
    // The failed tray out of service on the hub and in Ironic, with the swap's reason.
    const reason = `node swap ${job.name}: ${failed.name} replaced by ${spare.name}`;
    expect(await device(failed.id)).toMatchObject({
      cordoned: true,
      cordonReason: reason,
      cordonedBy: `job:${job.name}`,
      netbox: { status: "offline" },
    });
    expect(await ironicNode(failed.name)).toMatchObject({
      maintenance: true,
      maintenance_reason: `fleet-manager ${reason}`,
    });
    const requests = await topologyRequests();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ region: "us-east-1", reason: `${reason}: cableless swap` });
  });

  it("a cabled tray's swap moves its NetBox cables onto the spare's interfaces of the same name and files no topology-sync request", async () => {
    const tray = s.staged[CABLED]!;
    const sp = s.staged[CABLED_SPARE]!;
    const ifaceId = (d: Device, name: string) =>
      s.nb.data.interfaces.find((i) => i.device === d.netbox.id && i.name === name)!.id;
    const farEnds = (d: Device) =>
      ["eth0", "eth1"].map((name) => {
        const id = ifaceId(d, name);
        const c = s.nb.data.cables.find((x) => x.a.includes(id) || x.b.includes(id));
        return c ? [...c.a, ...c.b].filter((x) => x !== id) : null;
      });
    const before = farEnds(tray);
    expect(before.every((f) => f !== null)).toBe(true);
    const trayPlace = { ...nbDevice(tray) };
    const requests = (await topologyRequests()).length;
    const run = () => s.runJob({ kind: "NODE_SWAP", deviceIds: [tray.id], params: { spareDeviceId: sp.id } }, 120_000);
    // The first attempt's token may not delete cables: it fails at netbox-cables, after the rack
    // move, with every cable still on the failed tray.
    s.nb.revoke(["dcim.delete_cable"]);
    let first: Job;
    try {
      first = await run();
    } finally {
      s.nb.revoke([]);
    }
    expect(first.status).toBe("FAILED");
    expect(steps(first).slice(6, 8)).toEqual(["netbox-rack:SUCCEEDED", "netbox-cables:FAILED"]);
    expect(first.error?.message).toMatch(/403/);
    expect(farEnds(tray)).toEqual(before);
    expect(nbDevice(tray)).toMatchObject({ rack: trayPlace.rack, position: null, status: "active" });
    expect(nbDevice(sp)).toMatchObject({ rack: trayPlace.rack, position: trayPlace.position });
    // Granted, a new job finds the move done (the tray in its rack without a place, the spare in
    // it) and a cabled swap (the tray not offline), and moves the cables.
    const job = await run();
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(steps(job).slice(6, 9)).toEqual([
      "netbox-rack:SUCCEEDED",
      "netbox-cables:SUCCEEDED",
      "topology-sync:SKIPPED",
    ]);
    expect(job.steps.find((st) => st.name === "netbox-rack")!.message).toMatch(/already moved/);
    expect(farEnds(sp)).toEqual(before);
    expect(farEnds(tray)).toEqual([null, null]);
    expect(nbDevice(sp)).toMatchObject({
      rack: trayPlace.rack,
      position: trayPlace.position,
      face: trayPlace.face,
    });
    expect(nbDevice(tray)).toMatchObject({ rack: trayPlace.rack, position: null, status: "active" });
    expect((await topologyRequests()).length).toBe(requests);
  });
});
