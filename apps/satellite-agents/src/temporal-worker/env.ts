/** The Temporal worker's configuration, besides what every agent reads (../runtime/config.ts). */
import { z } from "zod";
import { SlurmDeviceNamePrefix } from "@fm/domain";
import { ConfigError } from "../runtime/config.ts";
import type { Config } from "../runtime/shell.ts";
import { TemporalEnv } from "../runtime/temporal-env.ts";

export const workerEnv = {
  ...TemporalEnv,
  OPENSTACK_OVERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the overcloud Ironic"),
  OPENSTACK_UNDERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the undercloud Ironic"),
  OPENSTACK_OVERCLOUD_CLOUD: z.string().min(1).optional(),
  OPENSTACK_UNDERCLOUD_CLOUD: z.string().min(1).optional(),
  IRONIC_ENROL_DRIVER: z
    .string()
    .min(1)
    .default("redfish")
    .describe("Ironic hardware type of enrolled nodes (fake-hardware in tests)"),
  IRONIC_DEPLOY_KERNEL: z
    .string()
    .min(1)
    .optional()
    .describe("IPA deploy kernel of new nodes (driver_info deploy_kernel: Glance image UUID or URL)"),
  IRONIC_DEPLOY_RAMDISK: z
    .string()
    .min(1)
    .optional()
    .describe("IPA deploy ramdisk of new nodes (driver_info deploy_ramdisk)"),
  NETBOX_URL: z.url().optional().describe("NetBox base URL (enrolment, unenrolment)"),
  NETBOX_TOKEN: z.string().min(1).optional(),
  SLURM_URL: z.url().optional().describe("slurmrestd base URL (burn-in, release SLURM step)"),
  SLURM_API_VERSION: z
    .string()
    .regex(/^v0\.0\.\d+$/)
    .default("v0.0.38")
    .describe("slurmrestd OpenAPI plugin version"),
  SLURM_USER: z.string().min(1).default("root").describe("X-SLURM-USER-NAME"),
  SLURM_TOKEN_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("File holding the slurmrestd JWT (re-read on every request, so rotation needs no restart)"),
  SLURM_DEVICE_NAME_PREFIX: SlurmDeviceNamePrefix,
  FM_DHCP_HOSTS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("dnsmasq --dhcp-hostsdir where enrolment writes BMC reservations"),
  FM_BURNIN_COMMAND: z
    .string()
    .min(1)
    .default('/usr/local/bin/fm-burn-in --duration "$FM_BURNIN_DURATION_S"')
    .describe("Shell command a burn-in SLURM job runs"),
  FM_POLL_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(2000)
    .describe("How often waiting activities poll Ironic and SLURM"),
  FM_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).default(50),
};
export type WorkerConfig = Config<typeof workerEnv>;

/** A source's URL and its credential, and the deploy kernel and ramdisk, come together or not at all. */
export function checkWorkerConfig(config: WorkerConfig): void {
  for (const [a, b] of [
    ["NETBOX_URL", "NETBOX_TOKEN"],
    ["SLURM_URL", "SLURM_TOKEN_FILE"],
    ["IRONIC_DEPLOY_KERNEL", "IRONIC_DEPLOY_RAMDISK"],
  ] as const) {
    if (Boolean(config[a]) !== Boolean(config[b]))
      throw new ConfigError([`${config[a] ? b : a}: required together with ${config[a] ? a : b}`]);
  }
}
