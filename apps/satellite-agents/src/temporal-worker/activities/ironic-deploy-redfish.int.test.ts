/**
 * IMAGE_NODE's deploy on Ironic's real `redfish` hardware type and `direct` deploy: a real
 * Ironic drives a test machine (@fm/test-support/ipa) through its Redfish BMC; the machine
 * PXE-boots the configuration Ironic wrote into an ironic-python-agent stand-in, which looks the
 * node up, heartbeats, and answers Ironic's agent commands: it downloads the image over HTTP,
 * verifies its checksum, writes it and the config drive to the machine's disk and powers the
 * machine off; Ironic then boots it from disk.
 *
 * The node PXE-boots the agent (boot interface `pxe`, BIOS boot mode): `redfish-virtual-media`
 * would need a BIOS/UEFI boot image built from syslinux or an ESP and a VirtualMedia service on
 * the BMC, while `pxe` with `[dhcp] dhcp_provider = none` only writes files to a TFTP root and
 * sets the boot device to Pxe, which the test machine's firmware reads. Nodes boot in BIOS mode
 * (no bootloader install for a whole-disk image) but for the UEFI case, where Ironic has the
 * agent install the bootloader.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient } from "@fm/clients";
import { getNode, ironicRequest, startIronic, waitForProvisionState, type IronicPeer } from "@fm/test-support/ironic";
import { MIB, rawDiskImage, startFileServer, startMachine, type FileServer, type Machine } from "@fm/test-support/ipa";
import { SYSTEM_PATH } from "@fm/test-support/redfish";
import { WAITING, expectFinal, plan, rejection, run } from "./activity-testing.ts";
import { deployActivities } from "./ironic-deploy.ts";

const PASSWORD = "bmc-Pa55word-deploy";

let ironic: IronicPeer;
let files: FileServer;
let scratch: string;
const machines: Machine[] = [];
let hostSeq = 40;

beforeAll(async () => {
  [ironic, files, scratch] = await Promise.all([
    startIronic({
      automatedClean: false,
      pxe: {
        // One retry of a failed download, at once (ironic-python-agent: 9 retries, 10 s apart).
        kernelAppendParams: "ipa-image-download-connection-retries=1 ipa-image-download-connection-retry-interval=0",
        // Heartbeats every 3 to 6 s instead of 90 to 180 s.
        ramdiskHeartbeatTimeoutS: 10,
        // A deploy whose agent never calls back fails after 30 s instead of 30 min.
        deployCallbackTimeoutS: 30,
      },
    }),
    startFileServer(),
    mkdtemp(join(tmpdir(), "deploy-machines-")),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all(machines.map((m) => m.stop()));
  await files?.stop();
  await ironic?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

const acts = () =>
  deployActivities({
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    pollIntervalMs: 200,
  });

/**
 * An available redfish node on a machine of its own: BMC credentials, the deploy kernel and
 * ramdisk on the file server, PXE boot in BIOS mode, a port with the machine's MAC.
 */
async function availableNode(o: { portMac?: string; bootMode?: "bios" | "uefi" } = {}) {
  const n = hostSeq++;
  const mac = `52:54:00:12:34:${n.toString(16).padStart(2, "0")}`;
  const machine = await startMachine({
    username: "admin",
    password: PASSWORD,
    host: `127.0.0.${n}`,
    nics: [{ id: "NIC1", mac }],
    tftpRoot: ironic.tftpRoot!,
    diskPath: join(scratch, `disk-${n}`),
    bootMode: o.bootMode ?? "bios",
  });
  machines.push(machine);
  const p = plan({ bmcAddress: machine.bmc.host });
  const node = (await ironicRequest(ironic.url, "POST", "/v1/nodes", {
    name: p.name,
    driver: "redfish",
    boot_interface: "pxe",
    deploy_interface: "direct",
    driver_info: {
      redfish_address: machine.bmc.url,
      redfish_system_id: SYSTEM_PATH,
      redfish_username: "admin",
      redfish_password: PASSWORD,
      deploy_kernel: files.put("/ipa.kernel", Buffer.from("a deploy kernel\n")),
      deploy_ramdisk: files.put("/ipa.initramfs", Buffer.from("a deploy ramdisk\n")),
    },
    properties: { capabilities: `boot_mode:${o.bootMode ?? "bios"}` },
  })) as { uuid: string };
  await ironicRequest(ironic.url, "POST", "/v1/ports", { node_uuid: node.uuid, address: o.portMac ?? mac });
  for (const [verb, state] of [
    ["manage", "manageable"],
    ["provide", "available"],
  ] as const) {
    await ironicRequest(ironic.url, "PUT", `/v1/nodes/${node.uuid}/states/provision`, { target: verb });
    await waitForProvisionState(ironic.url, node.uuid, state);
  }
  return { d: { ...p, ironicNodeUuid: node.uuid }, machine, mac };
}

/** An OS image: a raw disk with an MBR and one partition holding `text`. */
function osImage(text: string, diskIdentifier = 0x5eed1234) {
  const image = rawDiskImage({ sizeBytes: 4 * MIB, diskIdentifier, content: Buffer.from(text) });
  const path = `/images/${randomUUID()}.raw`;
  return { url: files.put(path, image), path, image, sha256: createHash("sha256").update(image).digest("hex") };
}

describe("ironicDeploy on the redfish hardware type, through the agent ramdisk", () => {
  it(
    "PXE-boots the agent, which writes the image and the config drive; the node ends active, booting from disk",
    async () => {
      const { d, machine } = await availableNode();
      const img = osImage("root file system of ubuntu-24.04-gpu\n");
      const userData = "#cloud-config\nhostname: gpu-node-a\n";
      await run(acts().ironicDeploy, d, {
        image: img.url,
        osHash: { algo: "sha256", value: img.sha256 },
        userData,
        marker: randomUUID(),
      });

      const node = await getNode(ironic.url, d.ironicNodeUuid);
      expect(node).toMatchObject({
        provision_state: "active",
        target_provision_state: null,
        power_state: "power on",
        last_error: null,
        boot_interface: "pxe",
        deploy_interface: "direct",
        instance_info: { image_source: img.url, configdrive: "******" },
      });
      // What the agent reported (its callback URL Ironic drops once the deploy is done).
      expect(node.driver_internal_info).toMatchObject({
        agent_version: "9.4.3",
        is_whole_disk_image: true,
        root_uuid_or_disk_id: "0x5eed1234",
      });

      // The firmware PXE-booted the agent once, with Ironic's API in its kernel command line; after
      // the agent powered the machine off, Ironic powered it on to the disk, persistently.
      expect(machine.boots.map((b) => [b.device, b.mode, b.outcome])).toEqual([
        ["Pxe", "bios", "agent"],
        ["Hdd", "bios", "instance"],
      ]);
      expect(machine.boots[0]!.cmdline).toContain(`ipa-api-url=${ironic.url}`);
      expect(machine.bmc.system.Boot).toMatchObject({
        BootSourceOverrideTarget: "Hdd",
        BootSourceOverrideEnabled: "Continuous",
        BootSourceOverrideMode: "Legacy",
      });
      expect(machine.bmc.system.PowerState).toBe("On");
      expect(machine.agent).toBeUndefined();

      // Ironic's commands to the agent, as the agent recorded them, all succeeded.
      const agent = machine.agents[0]!;
      expect(agent.nodeUuid).toBe(d.ironicNodeUuid);
      expect(agent.url).toBe(`http://${machine.bmc.host}:9999`);
      expect(agent.heartbeats).toBeGreaterThan(0);
      expect(agent.commands.map((c) => [c.command_name, c.command_status])).toEqual([
        ["get_deploy_steps", "SUCCEEDED"],
        ["execute_deploy_step", "SUCCEEDED"],
        ["get_partition_uuids", "SUCCEEDED"],
        ["power_off", "SUCCEEDED"],
      ]);
      expect(agent.commands[1]!.command_result).toMatchObject({
        deploy_step: { step: "write_image", interface: "deploy" },
        deploy_result: { result: expect.stringMatching(/written to device \/dev\/sda root_uuid=0x5eed1234$/) },
      });
      // Ironic cached the deploy kernel and ramdisk; the agent downloaded the image once.
      expect(files.requests).toContain("GET /ipa.kernel");
      expect(files.requests.filter((r) => r === `GET ${img.path}`)).toHaveLength(1);

      // The disk holds the image, plus the config drive Ironic built from the user data.
      // (The MBR differs from the image's only by the config drive's partition entry, the second.)
      const size = img.image.length;
      expect(machine.disk.read(0, 462).equals(img.image.subarray(0, 462))).toBe(true);
      expect(machine.disk.read(512, size - 512).equals(img.image.subarray(512))).toBe(true);
      const table = machine.disk.partitionTable()!;
      expect(table.partitions.map((p) => [p.number, p.type])).toEqual([
        [1, 0x83],
        [2, 0x0c],
      ]);
      const configDrive = table.partitions[1]!;
      expect(machine.disk.isoVolumeId(configDrive.startBytes)).toBe("config-2");
      expect(machine.disk.read(configDrive.startBytes, MIB).toString("latin1")).toContain(userData);
    },
    WAITING,
  );

  it(
    "in UEFI mode the firmware boots GRUB's configuration and Ironic has the agent install the bootloader, which for a whole-disk image without an EFI system partition or disk identifier it skips",
    async () => {
      const { d, machine } = await availableNode({ bootMode: "uefi" });
      const img = osImage("an image booting through its own loader\n", 0);
      await run(acts().ironicDeploy, d, {
        image: img.url,
        osHash: { algo: "sha256", value: img.sha256 },
        marker: randomUUID(),
      });
      expect(await getNode(ironic.url, d.ironicNodeUuid)).toMatchObject({
        provision_state: "active",
        last_error: null,
      });
      expect(machine.boots.map((b) => [b.device, b.mode, b.outcome])).toEqual([
        ["Pxe", "uefi", "agent"],
        ["Hdd", "uefi", "instance"],
      ]);
      const agent = machine.agents[0]!;
      expect(agent.commands.map((c) => [c.command_name, c.command_status])).toEqual([
        ["get_deploy_steps", "SUCCEEDED"],
        ["execute_deploy_step", "SUCCEEDED"],
        ["get_partition_uuids", "SUCCEEDED"],
        ["install_bootloader", "SUCCEEDED"],
        ["power_off", "SUCCEEDED"],
      ]);
      expect(agent.log.join("\n")).toContain("Not using grub2-install since root UUID is not provided");
    },
    WAITING,
  );

  it(
    "a checksum that does not match fails the deploy with Ironic's last_error from the agent, and the disk keeps no image",
    async () => {
      const { d, machine } = await availableNode();
      const img = osImage("the image somebody replaced\n");
      const wrong = "0".repeat(64);
      const f = expectFinal(
        await rejection(
          run(acts().ironicDeploy, d, {
            image: img.url,
            osHash: { algo: "sha256", value: wrong },
            marker: randomUUID(),
          }),
        ),
        "SourceRejected",
        /^deploy: node .* is deploy failed: /,
      );
      const node = await getNode(ironic.url, d.ironicNodeUuid);
      expect(node.provision_state).toBe("deploy failed");
      expect(node.last_error).toContain("Deploy step deploy.write_image failed");
      expect(node.last_error).toContain(
        `Image failed to verify against checksum. location: /tmp/${img.path.split("/").pop()}; image ID: ${img.path.split("/").pop()}; image checksum: ${wrong}; verification checksum: ${img.sha256}`,
      );
      expect(f.message).toContain(node.last_error!);

      const agent = machine.agents[0]!;
      const failed = agent.commands.find((c) => c.command_name === "execute_deploy_step")!;
      expect(failed).toMatchObject({
        command_status: "FAILED",
        command_error: { type: "ImageChecksumError", code: 500, message: "Error verifying image checksum" },
      });
      // ironic-python-agent retried the download once (ipa-image-download-connection-retries=1).
      expect(files.requests.filter((r) => r === `GET ${img.path}`)).toHaveLength(2);
      expect(machine.disk.partitionTable()).toBeUndefined();
      // Ironic collected the agent's logs on the failure (log.collect_system_logs).
      expect(agent.commands.map((c) => c.command_name)).toContain("collect_system_logs");
      const logs = agent.commands.find((c) => c.command_name === "collect_system_logs")!.command_result as {
        system_logs: string;
      };
      expect(gunzipSync(Buffer.from(logs.system_logs, "base64")).toString("latin1")).toContain(
        "Error verifying image checksum",
      );
    },
    WAITING,
  );

  it(
    "an agent that never calls back (Ironic's port has the wrong MAC, so the machine finds no PXE configuration) times the deploy out with Ironic's message",
    async () => {
      const { d, machine } = await availableNode({ portMac: "52:54:00:ff:ff:01" });
      const img = osImage("never written\n");
      const f = expectFinal(
        await rejection(
          run(acts().ironicDeploy, d, {
            image: img.url,
            osHash: { algo: "sha256", value: img.sha256 },
            marker: randomUUID(),
          }),
        ),
        "SourceRejected",
        `deploy: node ${d.name} is deploy failed: Timeout reached while waiting for callback for node ${d.ironicNodeUuid}`,
      );
      expect(f.message).not.toContain("Traceback");
      expect(machine.boots.map((b) => [b.device, b.outcome])).toEqual([["Pxe", "PXE-E53: No boot filename received"]]);
      expect(machine.agents).toEqual([]);
      expect(files.requests).not.toContain(`GET ${img.path}`);
    },
    WAITING,
  );
});
