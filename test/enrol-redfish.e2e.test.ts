/**
 * ENROL end to end on the `redfish` hardware type, every part a process: the hub, the NetBox test
 * server, a real Ironic (its redfish driver, python3-sushy) behind a Keystone stand-in, Temporal,
 * the site's agents and worker, and one test Redfish BMC per device on its own loopback address.
 * The worker reads BMC credentials from a mounted-style directory and resolves the enrol target
 * project through Keystone. Asserted: what the hub, Ironic, NetBox, the BMCs, Temporal and every
 * log show afterwards, and that the BMC password is in none of them.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, Connection } from "@temporalio/client";
import { temporal as proto } from "@temporalio/proto";
import type { Device } from "@fm/domain";
import { appCredentialCloud, startKeystoneServer, type KeystoneServer } from "@fm/clients/testing/keystone-server";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import { SYSTEM_PATH, startRedfishBmc, type RedfishBmc } from "@fm/test-support/redfish";

const execFileAsync = promisify(execFile);

/** Unique per run, so finding it anywhere means it leaked from this run. */
const SITE_PASSWORD = `site-${randomBytes(9).toString("hex")}`;
const OWN_PASSWORD = `own-${randomBytes(9).toString("hex")}`;
/** What the third device's BMC accepts: not the site's password, until its own item says so. */
const OTHER_PASSWORD = `other-${randomBytes(9).toString("hex")}`;
const TARGET_PROJECT = { id: "0f6c2a9e5d4b4c1e9a7d3b2c1e0f9a8b", name: "iad1-baremetal", domain_id: "default" };

/** The staged devices, by index: what their BMC accepts. */
const ENROLS = 0;
const OWN_ITEM = 1;
const WRONG_PASSWORD = 2;
const UNREACHABLE = 3;

let s: JobsStack;
let keystone: KeystoneServer;
let bmcs: RedfishBmc[];
let connection: Connection;
let temporal: Client;

beforeAll(async () => {
  const first = await startRedfishBmc({ username: "admin", password: SITE_PASSWORD, host: "127.0.0.40" });
  const port = first.port;
  bmcs = [
    first,
    await startRedfishBmc({ username: "root", password: OWN_PASSWORD, host: "127.0.0.41", port }),
    await startRedfishBmc({ username: "admin", password: OTHER_PASSWORD, host: "127.0.0.42", port }),
    await startRedfishBmc({ username: "admin", password: SITE_PASSWORD, host: "127.0.0.43", port }),
  ];
  await bmcs[UNREACHABLE]!.stop();
  s = await startJobsStack({
    stagedDevices: bmcs.length,
    slurmNodes: 0,
    // Nothing here boots the agent ramdisk automated cleaning would wait for.
    ironic: { automatedClean: false },
    stagedBmcAddress: (i) => bmcs[i]!.host,
    workerEnv: async ({ ironic, dir }) => {
      keystone = await startKeystoneServer({ ironicUrl: ironic.url, projects: [TARGET_PROJECT] });
      const clouds = join(dir, "keystone-clouds.yaml");
      await writeFile(clouds, appCredentialCloud(keystone.url));
      const creds = join(dir, "bmc-credentials");
      const item = async (name: string, username: string, password: string) => {
        await mkdir(join(creds, name), { recursive: true });
        await writeFile(join(creds, name, "username"), username);
        await writeFile(join(creds, name, "password"), password);
      };
      await item("site-bmc", "admin", SITE_PASSWORD);
      await item("gpu002-bmc", "root", OWN_PASSWORD);
      return {
        OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds,
        OPENSTACK_OVERCLOUD_CLOUD: "kef",
        IRONIC_ENROL_DRIVER: "redfish",
        IRONIC_ENROL_TARGET_PROJECT_NAME: TARGET_PROJECT.name,
        IRONIC_DEPLOY_KERNEL: "http://127.0.0.1:9/ipa.kernel",
        IRONIC_DEPLOY_RAMDISK: "http://127.0.0.1:9/ipa.initramfs",
        BMC_CREDENTIALS_DIR: creds,
        IRONIC_REDFISH_ADDRESS_TEMPLATE: `http://{address}:${port}`,
        IRONIC_REDFISH_SYSTEM_ID: SYSTEM_PATH,
        IRONIC_REDFISH_VERIFY_CA: "false",
      };
    },
  });
  connection = await Connection.connect({ address: s.temporal.address });
  temporal = new Client({ connection, namespace: "default" });
}, 240_000);
afterAll(async () => {
  await connection?.close();
  await s?.stop();
  await keystone?.close();
  await Promise.all((bmcs ?? []).map((b) => b.stop()));
}, 120_000);

const nodeNamed = async (name: string) =>
  ((await ironicRequest(s.ironic.url, "GET", "/v1/nodes?detail=true")) as { nodes: RawIronicNode[] }).nodes.find(
    (n) => n.name === name,
  );
const netboxStatus = (name: string) => s.nb.data.devices.find((d) => d.name === name)!.status;
/** NetBox's change log entries of the device and of its interfaces. */
const netboxChangesOf = (name: string) => {
  const dev = s.nb.data.devices.find((d) => d.name === name)!;
  const ifaces = new Set(s.nb.data.interfaces.filter((i) => i.device === dev.id).map((i) => i.id));
  return s.nb.data.objectChanges.filter(
    (c) =>
      (c.changed_object_type === "dcim.device" && c.changed_object_id === dev.id) ||
      (c.changed_object_type === "dcim.interface" && ifaces.has(c.changed_object_id)),
  );
};
const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;
/** The workflow's whole history as Temporal stores it (protobuf: payloads are their raw bytes). */
const historyBytes = async (workflowId: string) =>
  Buffer.from(
    proto.api.history.v1.History.encode(await temporal.workflow.getHandle(workflowId).fetchHistory()).finish(),
  );

describe("ENROL on the redfish hardware type against Redfish BMCs", () => {
  it("enrols a device through its BMC: node available with credentials, deploy images, owner, resource class and power", async () => {
    const d = s.staged[ENROLS]!;
    const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    const node = await nodeNamed(d.name);
    expect(node).toMatchObject({
      driver: "redfish",
      provision_state: "available",
      power_state: "power on",
      resource_class: "GPU_COMPUTE",
      owner: TARGET_PROJECT.id, // only Keystone knows it: the worker resolved the name there
      driver_info: {
        redfish_address: bmcs[ENROLS]!.url,
        redfish_system_id: SYSTEM_PATH,
        redfish_username: "admin",
        redfish_password: "******",
        redfish_verify_ca: false,
        deploy_kernel: "http://127.0.0.1:9/ipa.kernel",
        deploy_ramdisk: "http://127.0.0.1:9/ipa.initramfs",
      },
      // Out-of-band inspection through the BMC.
      properties: expect.objectContaining({ cpus: 16, cpu_arch: "x86_64", memory_mb: "98304" }),
    });
    expect(bmcs[ENROLS]!.requests).toContainEqual({ method: "GET", path: SYSTEM_PATH, auth: "session" });
    expect(netboxStatus(d.name)).toBe("active");
    const after = await device(d.id);
    expect(after).toMatchObject({
      ironic: { nodeUuid: node!.uuid, provisionState: "available", powerState: "power on", instance: "overcloud" },
    });
    // Ports from NetBox's MACs, made before inspection (which adds the BMC's own EthernetInterfaces).
    const { ports } = (await ironicRequest(s.ironic.url, "GET", `/v1/ports?node=${node!.uuid}&detail=true`)) as {
      ports: { address: string; extra: { netbox_interface?: string } }[];
    };
    const nics = after.interfaces.filter((i) => !i.mgmtOnly && i.macAddress);
    expect(nics.length).toBeGreaterThan(1);
    expect(ports.filter((p) => p.extra.netbox_interface).map((p) => [p.extra.netbox_interface, p.address])).toEqual(
      expect.arrayContaining(nics.map((i) => [i.name, i.macAddress!.toLowerCase()])),
    );
    expect(ports.filter((p) => p.extra.netbox_interface)).toHaveLength(nics.length);
  }, 120_000);

  it("a device's own credentials item is used instead of the site's", async () => {
    const d = s.staged[OWN_ITEM]!;
    const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(await nodeNamed(d.name)).toMatchObject({
      provision_state: "available",
      driver_info: { redfish_username: "root", redfish_password: "******" },
    });
    expect(bmcs[OWN_ITEM]!.requests.filter((r) => r.auth === "rejected")).toEqual([]);
  }, 120_000);

  it("a wrong BMC password fails the job at bmc-configure with Ironic's 401, and nothing is written to NetBox", async () => {
    const d = s.staged[WRONG_PASSWORD]!;
    const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(job).toMatchObject({ status: "FAILED", error: { step: "bmc-configure" } });
    expect(job.error!.message).toMatch(/manage: node gpu003 is enroll: Failed to get power state/);
    expect(job.error!.message).toMatch(/returned code 401/);
    const step = (name: string) => job.steps.find((st) => st.name === name)!.status;
    expect([step("ironic-enroll"), step("ironic-ports"), step("bmc-configure")]).toEqual([
      "SUCCEEDED",
      "SUCCEEDED",
      "FAILED",
    ]);
    expect(step("netbox-activate")).not.toBe("SUCCEEDED");
    expect(netboxStatus(d.name)).toBe("staged");
    expect(netboxChangesOf(d.name)).toEqual([]);
    expect(await nodeNamed(d.name)).toMatchObject({ provision_state: "enroll" });
    expect(bmcs[WRONG_PASSWORD]!.requests.some((r) => r.auth === "rejected")).toBe(true);

    // The operator adds the device's own item (the mounted Secret changes; the worker is not
    // restarted): the next ENROL writes the password again and succeeds.
    const item = join(s.workerEnv.BMC_CREDENTIALS_DIR!, `${d.name}-bmc`);
    await mkdir(item);
    await writeFile(join(item, "username"), "admin");
    await writeFile(join(item, "password"), OTHER_PASSWORD);
    const again = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(again.status, JSON.stringify(again.error)).toBe("SUCCEEDED");
    expect(await nodeNamed(d.name)).toMatchObject({ provision_state: "available", power_state: "power on" });
    expect(netboxStatus(d.name)).toBe("active");
  }, 180_000);

  it("an unreachable BMC fails the job at bmc-configure with Ironic's connection error", async () => {
    const d = s.staged[UNREACHABLE]!;
    const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(job).toMatchObject({ status: "FAILED", error: { step: "bmc-configure" } });
    expect(job.error!.message).toMatch(/Unable to connect to http:\/\/127\.0\.0\.43:\d+\/redfish\/v1\//);
    expect(netboxStatus(d.name)).toBe("staged");
    expect(netboxChangesOf(d.name)).toEqual([]);
  }, 120_000);

  it("no BMC password is in any job record, hub table, log line or Temporal history", async () => {
    const jobs = (await s.api<{ items: { id: string }[] }>("GET", "/api/v1/jobs/?limit=100")).body.items;
    expect(jobs).toHaveLength(5);
    const { stdout: dump } = await execFileAsync("pg_dump", ["--data-only", s.db.url], { maxBuffer: 256 << 20 });
    const logs = [s.hub, s.worker, s.workflowAgent, s.netboxAgent]
      .map((p) => JSON.stringify(p.logs) + p.stderr.join("\n"))
      .join("\n");
    const records = JSON.stringify(await Promise.all(jobs.map((j) => s.api("GET", `/api/v1/jobs/${j.id}/`))));
    const histories = await Promise.all(jobs.map((j) => historyBytes(j.id)));
    // The searches find what is there: the device names are in each of them.
    expect(dump).toContain("gpu003");
    expect(logs).toContain("gpu003");
    expect(records).toContain("gpu003");
    expect(Buffer.concat(histories).includes("gpu003")).toBe(true);
    for (const secret of [SITE_PASSWORD, OWN_PASSWORD, OTHER_PASSWORD]) {
      expect(dump).not.toContain(secret);
      expect(logs).not.toContain(secret);
      expect(records).not.toContain(secret);
      for (const h of histories) expect(h.includes(secret)).toBe(false);
    }
  }, 60_000);
});
