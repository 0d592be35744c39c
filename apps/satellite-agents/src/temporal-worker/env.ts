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
  IRONIC_ENROL_BOOT_INTERFACE: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/, {
      message: "must be an Ironic boot interface name such as pxe or redfish-virtual-media",
    })
    .optional()
    .describe(
      "boot_interface of enrolled nodes (pxe, ipxe, redfish-virtual-media, ...); unset: Ironic's default for the hardware type",
    ),
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
  IRONIC_ENROL_TARGET_PROJECT_NAME: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Keystone project that owns enrolled nodes (node owner), resolved to its id through the cloud's Keystone",
    ),
  BMC_CREDENTIALS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Mounted secret directory: <device>-bmc/{username,password} per device, else site-bmc/{username,password}",
    ),
  IRONIC_REDFISH_ADDRESS_TEMPLATE: z
    .string()
    .includes("{address}", { message: "must contain {address}" })
    .default("https://{address}")
    .describe("redfish_address of a node, {address} being the device's BMC address"),
  IRONIC_REDFISH_SYSTEM_ID: z
    .string()
    .startsWith("/redfish/v1/Systems/", { message: "must be a path such as /redfish/v1/Systems/1" })
    .optional()
    .describe("redfish_system_id, for BMCs that hold more than one system"),
  IRONIC_REDFISH_VERIFY_CA: z
    .string()
    .min(1)
    .default("true")
    .describe("redfish_verify_ca: true, false, or a CA bundle path on the Ironic conductor"),
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
  SLURM_DRAIN_VIA: z
    .enum(["auto", "rest", "scontrol"])
    .default("auto")
    .describe(
      "How SLURM adoption resumes a node: slurmrestd's node update (v0.0.40+), scontrol, or auto (by API version)",
    ),
  SLURM_SCONTROL: z.string().min(1).default("scontrol").describe("The scontrol executable (SLURM_DRAIN_VIA scontrol)"),
  OPENSTACK_SLURM_CLOUDS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "clouds.yaml of the SLURM project (the guide's openstack-slurm document): an application credential scoped to it, Nova from its catalog",
    ),
  OPENSTACK_SLURM_CLOUD: z.string().min(1).optional(),
  OPENSTACK_SLURM_PROJECT_NAME: z
    .string()
    .min(1)
    .optional()
    .describe(
      "openstack.slurm.targetProjectName: the project SLURM servers are made in; the credential must be scoped to it",
    ),
  OPENSTACK_SLURM_NETWORK: z
    .uuid()
    .optional()
    .describe("openstack.slurm.network: the provider network UUID SLURM servers attach to"),
  OPENSTACK_SLURM_KEY_NAME: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("openstack.slurm.keyName: the Nova key pair injected as cloud-user ({deployment}-keypair)"),
  FM_SLURM_REGISTER_TIMEOUT_S: z.coerce
    .number()
    .int()
    .min(1)
    .default(1800)
    .describe("How long SLURM adoption waits for a new server's SLURM node to register, seconds"),
  FM_DHCP_HOSTS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("dnsmasq --dhcp-hostsdir where enrolment writes BMC reservations"),
  FM_BURNIN_COMMAND: z
    .string()
    .min(1)
    .default(
      'enroot create --force --name "fm-$SLURM_JOB_ID-$FM_TEST" "$FM_TEST_IMAGE" >/dev/null && enroot start --rw "fm-$SLURM_JOB_ID-$FM_TEST" "$FM_BURNIN_DURATION_S"; rc=$?; enroot remove --force "fm-$SLURM_JOB_ID-$FM_TEST" >/dev/null 2>&1; exit $rc',
    )
    .describe(
      "Shell command that runs one hardware test's Enroot image (FM_TEST_IMAGE) on a node; FM_TEST, FM_DEVICE and FM_BURNIN_DURATION_S (seconds) are set",
    ),
  FM_BURNIN_OUTPUT_DIR: z
    .string()
    .startsWith("/", { message: "must be an absolute path" })
    .optional()
    .describe(
      "Folder on a filesystem both the compute nodes and this worker mount: tests write their logs and exit codes there, the worker reads them (needed for burn-in)",
    ),
  HARDWARE_TESTS_DEFAULT_IMAGE_X86_64: z
    .string()
    .min(1)
    .optional()
    .describe("hardwareTests.defaultContainerImage.x86_64: the default test image (.sqsh) for x86_64 nodes"),
  HARDWARE_TESTS_DEFAULT_IMAGE_AARCH64: z
    .string()
    .min(1)
    .optional()
    .describe("hardwareTests.defaultContainerImage.aarch64: the default test image (.sqsh) for aarch64 nodes"),
  HARDWARE_TESTS_DEFAULT_IMAGE: z
    .string()
    .min(1)
    .optional()
    .describe("The legacy scalar defaultContainerImage: used where the node's architecture has no keyed image"),
  HARDWARE_TESTS_GPU_FRYER_IMAGE: z.string().min(1).optional().describe("hardwareTests.gpuFryerContainerImage (.sqsh)"),
  HARDWARE_TESTS_NVLOOM_IMAGE: z
    .string()
    .min(1)
    .optional()
    .describe("hardwareTests.nvloomContainerImage (.sqsh), for the multi-node NVLink test"),
  S3_ENDPOINT: z.url().optional().describe("Object storage for burn-in artifacts (the workflow agent's bucket)"),
  BUCKET_NAME: z.string().min(3).max(63).optional().describe("Bucket for burn-in artifacts"),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional().describe("Object storage access key (secret)"),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional().describe("Object storage secret key (secret; never logged)"),
  AWS_REGION: z.string().min(1).default("us-east-1").describe("Region the S3 requests are signed for"),
  FM_POLL_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(2000)
    .describe("How often waiting activities poll Ironic and SLURM"),
  FM_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).default(50),
};
export type WorkerConfig = Config<typeof workerEnv>;

/** IRONIC_REDFISH_VERIFY_CA as Ironic's redfish_verify_ca takes it: a boolean, or a path kept as is. */
export function redfishVerifyCa(value: string): boolean | string {
  const lower = value.toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  return value;
}

/** A source's URL and its credential, and the deploy kernel and ramdisk, come together or not at all. */
export function checkWorkerConfig(config: WorkerConfig): void {
  for (const [a, b] of [
    ["NETBOX_URL", "NETBOX_TOKEN"],
    ["SLURM_URL", "SLURM_TOKEN_FILE"],
    ["IRONIC_DEPLOY_KERNEL", "IRONIC_DEPLOY_RAMDISK"],
    ["S3_ENDPOINT", "BUCKET_NAME"],
    ["S3_ENDPOINT", "AWS_ACCESS_KEY_ID"],
    ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
  ] as const) {
    if (Boolean(config[a]) !== Boolean(config[b]))
      throw new ConfigError([`${config[a] ? b : a}: required together with ${config[a] ? a : b}`]);
  }
  // openstack.slurm: the project, network and key pair come with the cloud, and all need slurmrestd.
  const adoption = [
    "OPENSTACK_SLURM_CLOUDS_FILE",
    "OPENSTACK_SLURM_PROJECT_NAME",
    "OPENSTACK_SLURM_NETWORK",
    "OPENSTACK_SLURM_KEY_NAME",
  ] as const;
  const given = adoption.filter((v) => config[v]);
  if (given.length && given.length < adoption.length)
    throw new ConfigError(
      adoption.filter((v) => !config[v]).map((v) => `${v}: required together with ${given.join(", ")}`),
    );
  if (given.length && !config.SLURM_URL)
    throw new ConfigError(["SLURM_URL: SLURM adoption (OPENSTACK_SLURM_*) waits for the node on slurmrestd"]);
}
