/**
 * The test machine's disk and network boot loader on their own: what a deploy leaves on the disk
 * and which configuration the firmware follows. (Against the real Ironic: ironic-deploy-redfish.int.test.ts.)
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Disk, MIB, rawDiskImage } from "./disk.ts";
import { kernelParams, pxeConfig } from "./machine.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ipa-machine-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the test machine's disk", () => {
  it("reads an image's MBR, adds the config drive over the last 64 MiB in the next slot, and wipes the table", () => {
    const disk = Disk.create(join(dir, "disk-a"), 128 * MIB);
    expect(disk.partitionTable()).toBeUndefined();
    disk.write(0, rawDiskImage({ sizeBytes: 2 * MIB, diskIdentifier: 0xcafe0001, content: Buffer.from("root") }));
    expect(disk.partitionTable()).toEqual({
      kind: "msdos",
      diskIdentifier: "0xcafe0001",
      partitions: [{ number: 1, type: 0x83, bootable: true, startBytes: MIB, sizeBytes: MIB }],
    });
    expect(disk.addPrimaryPartitionAtEnd(64, 0x0c)).toEqual({
      number: 2,
      type: 0x0c,
      bootable: false,
      startBytes: 64 * MIB,
      sizeBytes: 64 * MIB,
    });
    expect(disk.partitionTable()!.partitions.map((p) => p.number)).toEqual([1, 2]);
    expect(disk.read(MIB, 4).toString()).toBe("root");
    disk.destroyMetadata();
    expect(disk.partitionTable()).toBeUndefined();
  });
});

describe("the machine's network boot", () => {
  it("follows PXELINUX's MAC-named configuration in BIOS mode and GRUB's in UEFI mode, as Ironic writes them", async () => {
    const tftp = join(dir, "tftp");
    const node = "1be26c0b-03f2-4d2e-ae87-c02d7bcaee64";
    await mkdir(join(tftp, node), { recursive: true });
    await mkdir(join(tftp, "pxelinux.cfg"));
    await writeFile(join(tftp, node, "deploy_kernel"), "k");
    await writeFile(join(tftp, node, "deploy_ramdisk"), "r");
    // As ironic/drivers/modules/pxe_config.template and pxe_grub_config.template render them.
    await writeFile(
      join(tftp, node, "config"),
      `default deploy\n\nlabel deploy\nkernel ${node}/deploy_kernel\nappend initrd=${node}/deploy_ramdisk selinux=0 troubleshoot=0 text nofb ipa-api-url=http://127.0.0.1:6385 ipa-global-request-id=req-1\nipappend 2\n\nlabel boot_whole_disk\nCOM32 chain.c32\nappend mbr:{{ DISK_IDENTIFIER }}\n`,
    );
    await writeFile(
      join(tftp, node, "grub.cfg"),
      `set default=deploy\nset timeout=5\n\nmenuentry "deploy"  {\n    linuxefi ${node}/deploy_kernel selinux=0 troubleshoot=0 text nofb ipa-api-url=http://127.0.0.1:6385 boot_server=127.0.0.1\n    initrdefi ${node}/deploy_ramdisk\n}\n`,
    );
    await symlink(`../${node}/config`, join(tftp, "pxelinux.cfg", "01-52-54-00-00-00-01"));
    await symlink(`${node}/grub.cfg`, join(tftp, "grub.cfg-01-52-54-00-00-00-01"));

    const bios = pxeConfig(tftp, ["52:54:00:00:00:09", "52:54:00:00:00:01"], "bios");
    expect(bios).toEqual({
      kernel: `${node}/deploy_kernel`,
      initrd: `${node}/deploy_ramdisk`,
      cmdline: "selinux=0 troubleshoot=0 text nofb ipa-api-url=http://127.0.0.1:6385 ipa-global-request-id=req-1",
    });
    expect(kernelParams((bios as { cmdline: string }).cmdline)).toMatchObject({
      "ipa-api-url": "http://127.0.0.1:6385",
      "ipa-global-request-id": "req-1",
      selinux: "0",
    });
    expect(pxeConfig(tftp, ["52:54:00:00:00:01"], "uefi")).toMatchObject({
      kernel: `${node}/deploy_kernel`,
      initrd: `${node}/deploy_ramdisk`,
      cmdline: expect.stringContaining("ipa-api-url=http://127.0.0.1:6385"),
    });
    expect(pxeConfig(tftp, ["52:54:00:00:00:09"], "bios")).toBe("PXE-E53: No boot filename received");
    await rm(join(tftp, node, "deploy_ramdisk"));
    expect(pxeConfig(tftp, ["52:54:00:00:00:01"], "bios")).toBe(`TFTP: file not found: ${node}/deploy_ramdisk`);
  });
});
