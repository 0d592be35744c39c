/**
 * IMAGE_NODE end to end on the `redfish` hardware type, every part a process but the machines:
 * the hub, the NetBox test server, a real Ironic (redfish driver, `direct` deploy, PXE boot in
 * BIOS mode by default), Temporal, the site's agents and worker; each device a test machine
 * (@fm/test-support/ipa) behind its own Redfish BMC, whose NICs carry the device's NetBox MACs and
 * which PXE-boots an ironic-python-agent stand-in. ENROL makes the node available, IMAGE_NODE
 * deploys an image the agent downloads and verifies; the job records the node `active`.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device } from "@fm/domain";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { MIB, rawDiskImage, startFileServer, startMachine, type FileServer, type Machine } from "@fm/test-support/ipa";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import { freePort } from "@fm/test-support/ports";
import { SYSTEM_PATH } from "@fm/test-support/redfish";

const PASSWORD = `site-${randomBytes(9).toString("hex")}`;
const host = (i: number) => `127.0.0.${70 + i}`;

let s: JobsStack;
let files: FileServer;
let port: number;
const machines: Machine[] = [];

beforeAll(async () => {
  [files, port] = await Promise.all([startFileServer(), freePort()]);
  s = await startJobsStack({
    // The image server is this machine's (Ironic's simulated agent downloads from it): the
    // hub's owner names it, and plain http, as a site with a provisioning-network mirror does.
    hubEnv: { FM_IMAGE_ALLOW_HTTP: "true", FM_IMAGE_HOSTS: "127.0.0.1" },
    stagedDevices: 2,
    slurmNodes: 0,
    ironic: {
      automatedClean: false,
      pxe: {
        biosByDefault: true,
        kernelAppendParams: "ipa-image-download-connection-retries=0",
        ramdiskHeartbeatTimeoutS: 10,
      },
    },
    stagedBmcAddress: host,
    workerEnv: async ({ dir }) => {
      const creds = join(dir, "bmc-credentials");
      await mkdir(join(creds, "site-bmc"), { recursive: true });
      await writeFile(join(creds, "site-bmc", "username"), "admin");
      await writeFile(join(creds, "site-bmc", "password"), PASSWORD);
      return {
        IRONIC_ENROL_DRIVER: "redfish",
        // Ironic's default for redfish is virtual media; this site PXE-boots the agent ramdisk.
        IRONIC_ENROL_BOOT_INTERFACE: "pxe",
        IRONIC_DEPLOY_KERNEL: files.put("/ipa.kernel", Buffer.from("a deploy kernel\n")),
        IRONIC_DEPLOY_RAMDISK: files.put("/ipa.initramfs", Buffer.from("a deploy ramdisk\n")),
        BMC_CREDENTIALS_DIR: creds,
        IRONIC_REDFISH_ADDRESS_TEMPLATE: `http://{address}:${port}`,
        IRONIC_REDFISH_SYSTEM_ID: SYSTEM_PATH,
        IRONIC_REDFISH_VERIFY_CA: "false",
      };
    },
  });
  // Each staged device's machine: its BMC at the device's OOB address, its NICs the device's MACs.
  for (const [i, d] of s.staged.entries()) {
    const nics = d.interfaces
      .filter((n) => !n.mgmtOnly && n.macAddress)
      .map((n) => ({ id: n.name, mac: n.macAddress!.toLowerCase() }));
    machines.push(
      await startMachine({
        username: "admin",
        password: PASSWORD,
        host: host(i),
        port,
        nics,
        tftpRoot: s.ironic.tftpRoot!,
        diskPath: join(s.ironic.dir, `disk-${d.name}`),
        bootMode: "bios",
      }),
    );
  }
}, 240_000);
afterAll(async () => {
  await Promise.all(machines.map((m) => m.stop()));
  await s?.stop();
  await files?.stop();
}, 120_000);

const nodeNamed = async (name: string) =>
  ((await ironicRequest(s.ironic.url, "GET", "/v1/nodes?detail=true")) as { nodes: RawIronicNode[] }).nodes.find(
    (n) => n.name === name,
  );
const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;

function osImage(text: string) {
  const image = rawDiskImage({ sizeBytes: 2 * MIB, diskIdentifier: 0x0ddba11, content: Buffer.from(text) });
  const path = `/images/${randomUUID()}.raw`;
  return { url: files.put(path, image), path, sha256: createHash("sha256").update(image).digest("hex") };
}

describe("IMAGE_NODE on the redfish hardware type, through the agent ramdisk", () => {
  it("ENROL, then IMAGE_NODE: the machine PXE-boots the agent, the image and user data land on its disk, the job records the node active", async () => {
    const d = s.staged[0]!;
    const machine = machines[0]!;
    const enrol = await s.runJob({ kind: "ENROL", deviceIds: [d.id] }, 120_000);
    expect(enrol.status, JSON.stringify(enrol.error)).toBe("SUCCEEDED");
    expect(await nodeNamed(d.name)).toMatchObject({
      driver: "redfish",
      boot_interface: "pxe",
      deploy_interface: "direct",
      provision_state: "available",
    });

    const img = osImage("ubuntu-24.04-gpu\n");
    const userData = `#cloud-config\nhostname: ${d.name}\n`;
    const job = await s.runJob(
      {
        kind: "IMAGE_NODE",
        deviceIds: [d.id],
        params: { image: img.url, osHash: { algo: "sha256", value: img.sha256 }, userData },
      },
      120_000,
    );
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(job.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "ironic-deploy:SUCCEEDED",
      "hub-record:SUCCEEDED",
    ]);
    expect(await nodeNamed(d.name)).toMatchObject({
      provision_state: "active",
      power_state: "power on",
      last_error: null,
      instance_info: { image_source: img.url, configdrive: "******" },
    });
    expect((await device(d.id)).ironic).toMatchObject({ provisionState: "active", powerState: "power on" });

    expect(machine.boots.map((b) => `${b.device}:${b.outcome}`)).toEqual(["Pxe:agent", "Hdd:instance"]);
    expect(machine.bmc.system.Boot).toMatchObject({
      BootSourceOverrideTarget: "Hdd",
      BootSourceOverrideEnabled: "Continuous",
    });
    const table = machine.disk.partitionTable()!;
    expect(table.diskIdentifier).toBe("0x00ddba11");
    const configDrive = table.partitions.find((p) => machine.disk.isoVolumeId(p.startBytes) === "config-2")!;
    expect(machine.disk.read(configDrive.startBytes, MIB).toString("latin1")).toContain(userData);
  }, 300_000);

  it("an image whose checksum does not match fails the job at ironic-deploy with the agent's error from Ironic's last_error", async () => {
    const d = s.staged[1]!;
    const enrol = await s.runJob({ kind: "ENROL", deviceIds: [d.id] }, 120_000);
    expect(enrol.status, JSON.stringify(enrol.error)).toBe("SUCCEEDED");
    const img = osImage("tampered\n");
    const wrong = "ab".repeat(32);
    const job = await s.runJob(
      { kind: "IMAGE_NODE", deviceIds: [d.id], params: { image: img.url, osHash: { algo: "sha256", value: wrong } } },
      120_000,
    );
    expect(job).toMatchObject({ status: "FAILED", error: { step: "ironic-deploy" } });
    expect(job.error!.message).toMatch(
      new RegExp(`^ironic-deploy: deploy: node ${d.name} is deploy failed: Deploy step deploy\\.write_image failed`),
    );
    expect(job.error!.message).toContain(
      `Image failed to verify against checksum. location: /tmp/${img.path.split("/").pop()}; image ID: ${img.path.split("/").pop()}; image checksum: ${wrong}; verification checksum: ${img.sha256}`,
    );
    expect((await nodeNamed(d.name))!.provision_state).toBe("deploy failed");
    expect(machines[1]!.disk.partitionTable()).toBeUndefined();
  }, 300_000);
});
