/**
 * A bare-metal machine for deploy tests (`@fm/test-support/ipa`): a test Redfish BMC
 * (../redfish/bmc.ts) whose system, when powered on, does what the machine's firmware would:
 *
 * - boot source override `Pxe` (Ironic's `pxe` boot interface sets it, once): PXE-boot from the
 *   conductor's TFTP root. The firmware asks for the configuration file named after each of its
 *   NICs' MACs, as PXELINUX does in BIOS mode (`pxelinux.cfg/01-<mac>`) and GRUB in UEFI mode
 *   (`grub.cfg-01-<mac>`), follows the default entry, checks that its kernel and initrd are there
 *   and starts the agent ramdisk: the IPA stand-in (./agent.ts) with that kernel command line.
 *   There is no DHCP and no TFTP server: the firmware reads the files from the folder Ironic
 *   writes them to ([pxe] tftp_root), which a real TFTP server would serve.
 * - `Hdd` (persistent, as Ironic sets it after deploying), or no override: boot the disk. A disk
 *   with an MBR boot signature boots "the instance" (recorded in `boots`); nothing runs on it.
 * - a reset that powers off, or the agent's `poweroff`, stops the agent.
 *
 * Boot source override `Once` reverts to `Disabled` after the boot it applied to (DSP0268
 * ComputerSystem `BootSourceOverrideEnabled`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startRedfishBmc, type RedfishBmc, type RedfishBmcOptions } from "../redfish/bmc.ts";
import { bootAgent, type Agent } from "./agent.ts";
import { Disk } from "./disk.ts";

export interface MachineOptions extends Omit<RedfishBmcOptions, "onReset" | "ethernetInterfaces" | "powerState"> {
  /** The machine's NICs (also the BMC's EthernetInterfaces), the first one PXE-boots. */
  nics: { id: string; mac: string }[];
  /** Ironic's [pxe] tftp_root, which a TFTP server would serve. */
  tftpRoot: string;
  /** The disk's backing file (created sparse, `diskBytes` long). */
  diskPath: string;
  diskBytes?: number;
  /**
   * The firmware's boot mode, as the BMC reports it (`Boot.BootSourceOverrideMode`: UEFI, or
   * Legacy for "bios"); Ironic's redfish inspection records it as the node's boot_mode. UEFI by
   * default, as the mock-up says.
   */
  bootMode?: "bios" | "uefi";
}

export interface Boot {
  device: "Pxe" | "Hdd";
  mode: "bios" | "uefi";
  /** What came of it: the agent started with this kernel command line, the instance, or why not. */
  outcome: "agent" | "instance" | string;
  cmdline?: string;
}

export interface Machine {
  bmc: RedfishBmc;
  disk: Disk;
  /** The running agent, if the machine runs one now. */
  agent: Agent | undefined;
  /** Every agent the machine has booted. */
  agents: Agent[];
  boots: Boot[];
  stop(): Promise<void>;
}

export async function startMachine(opts: MachineOptions): Promise<Machine> {
  const disk = Disk.create(opts.diskPath, opts.diskBytes ?? 128 * 1024 * 1024);
  // The BMC is set once it listens (its reset hook needs the machine first).
  const machine: Machine = {
    bmc: undefined as unknown as RedfishBmc,
    disk,
    agent: undefined,
    agents: [],
    boots: [],
    stop: async () => {
      const a = machine.agent;
      machine.agent = undefined;
      await Promise.all([a?.stop(), machine.bmc.stop()]);
    },
  };
  const address = opts.host ?? "127.0.0.1";

  // The next agent binds the same address and port: it starts once the previous one has stopped.
  const stopAgent = async () => {
    const a = machine.agent;
    machine.agent = undefined;
    await a?.stop();
  };

  const shutdown = (how: "poweroff" | "reboot") => {
    if (how === "poweroff") {
      void stopAgent();
      machine.bmc.system.PowerState = "Off";
    } else void stopAgent().then(boot);
  };

  const boot = () => {
    const b = machine.bmc.system.Boot as {
      BootSourceOverrideEnabled?: string;
      BootSourceOverrideTarget?: string;
      BootSourceOverrideMode?: string;
    };
    const mode = b.BootSourceOverrideMode === "Legacy" ? "bios" : "uefi";
    const override = b.BootSourceOverrideEnabled === "Once" || b.BootSourceOverrideEnabled === "Continuous";
    const device = override && b.BootSourceOverrideTarget === "Pxe" ? "Pxe" : "Hdd";
    if (b.BootSourceOverrideEnabled === "Once")
      machine.bmc.system.Boot = { ...b, BootSourceOverrideEnabled: "Disabled" };
    if (device === "Hdd") {
      const table = disk.partitionTable();
      machine.boots.push({ device, mode, outcome: table ? "instance" : "no bootable device" });
      return;
    }
    const found = pxeConfig(
      opts.tftpRoot,
      opts.nics.map((n) => n.mac),
      mode,
    );
    if (typeof found === "string") {
      machine.boots.push({ device, mode, outcome: found });
      return;
    }
    machine.boots.push({ device, mode, outcome: "agent", cmdline: found.cmdline });
    const agent = bootAgent({
      params: kernelParams(found.cmdline),
      address,
      macs: opts.nics.map((n) => n.mac),
      disk,
      bootMode: mode,
      shutdown,
    });
    machine.agent = agent;
    machine.agents.push(agent);
  };

  machine.bmc = await startRedfishBmc({
    ...opts,
    powerState: "Off",
    ethernetInterfaces: opts.nics,
    onReset: ({ from, to }) => {
      void (async () => {
        if (from === "On") await stopAgent();
        if (to === "On") boot();
      })();
    },
  });
  if (opts.bootMode === "bios")
    machine.bmc.system.Boot = { ...machine.bmc.system.Boot, BootSourceOverrideMode: "Legacy" };
  return machine;
}

/** `key=value` words of a kernel command line (IPA's utils.py get_agent_params reads /proc/cmdline so). */
export function kernelParams(cmdline: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of cmdline.trim().split(/\s+/)) {
    const i = word.indexOf("=");
    if (i > 0) out[word.slice(0, i)] = word.slice(i + 1);
  }
  return out;
}

/**
 * The boot entry the network boot loader would run: the configuration file for the first NIC
 * that has one (Ironic's pxe_utils `_link_mac_pxe_configs` names them), its default entry's
 * kernel command line, after checking that the kernel and initrd it names exist. Ironic's
 * templates (ironic/drivers/modules/pxe_config.template, pxe_grub_config.template at 21.4.4)
 * are the only syntax understood. A string says why nothing booted.
 */
export function pxeConfig(
  tftpRoot: string,
  macs: string[],
  mode: "bios" | "uefi",
): { cmdline: string; kernel: string; initrd: string } | string {
  for (const mac of macs) {
    const dashed = mac.toLowerCase().replace(/:/g, "-");
    const file =
      mode === "bios" ? join(tftpRoot, "pxelinux.cfg", `01-${dashed}`) : join(tftpRoot, `grub.cfg-01-${dashed}`);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    let kernel: string | undefined;
    let initrd: string | undefined;
    let cmdline = "";
    if (mode === "bios") {
      // default <label> / label <label> / kernel <path> / append initrd=<path> <params>
      const label = /^default\s+(\S+)/m.exec(text)?.[1];
      const block = text.split(/^label\s+/m).find((b) => b.startsWith(`${label}\n`) || b.startsWith(`${label} `));
      kernel = block && /^kernel\s+(\S+)/m.exec(block)?.[1];
      const append = block && /^append\s+(.*)$/m.exec(block)?.[1];
      initrd = append && /(?:^|\s)initrd=(\S+)/.exec(append)?.[1];
      cmdline = (append ?? "").replace(/(?:^|\s)initrd=\S+/, "").trim();
    } else {
      // set default=<name> / menuentry "<name>" { linuxefi <path> <params> / initrdefi <path> }
      const name = /^set default=(\S+)/m.exec(text)?.[1];
      const entry = text.split(/^menuentry\s+/m).find((b) => b.startsWith(`"${name}"`));
      const linux = entry && /^\s*linux(?:efi)?\s+(\S+)\s*(.*)$/m.exec(entry);
      kernel = linux?.[1];
      cmdline = linux?.[2]?.trim() ?? "";
      initrd = entry && /^\s*initrd(?:efi)?\s+(\S+)/m.exec(entry)?.[1];
    }
    if (!kernel || !initrd) return `no kernel or initrd in ${file}`;
    const local = (p: string) => (p.startsWith(tftpRoot) ? p : join(tftpRoot, p));
    for (const f of [kernel, initrd]) if (!existsSync(local(f))) return `TFTP: file not found: ${f}`;
    return { cmdline, kernel, initrd };
  }
  return "PXE-E53: No boot filename received";
}
