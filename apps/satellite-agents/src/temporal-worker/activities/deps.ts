/** What the activities are built from, and the one way each reaches a source it may lack. */
import type { HubClient, IronicClient, NetboxClient, NovaClient, SlurmClient } from "@fm/clients";
import type { NodeDrainer } from "../../slurm-agent/drain.ts";
import type { IronicInstance } from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import type { ArtifactStore } from "./artifacts.ts";
import type { BmcCredentialSource } from "./bmc-credentials.ts";
import type { HardwareTestImages } from "./burn-in-script.ts";
import type { RedfishSettings } from "./driver-info.ts";
import { badInput, notConfigured } from "./failures.ts";

export interface ActivityDeps {
  /** The site this worker serves (FM_SITE): it runs no other site's job. */
  site: string;
  hub: HubClient;
  netbox?: NetboxClient | undefined;
  ironic: Partial<Record<IronicInstance, IronicClient>>;
  slurm?: SlurmClient | undefined;
  /** Node updates (resume) through slurmrestd or scontrol, as the API version allows. */
  slurmNodes?: Pick<NodeDrainer, "resume" | "via"> | undefined;
  /** Nova in the SLURM project (openstack.slurm), for SLURM adoption. */
  nova?: NovaClient | undefined;
  /** Where SLURM adoption's servers go: the provider network and the key pair; how long a node may take to register. */
  slurmAdoption?: { networkId: string; keyName: string; registerTimeoutMs: number } | undefined;
  /** A device's name is this prefix and its SLURM node's name (`slurmNodeNameOf`). */
  slurmDeviceNamePrefix: string;
  /** Ironic hardware type for new nodes (`redfish`, `ipmi`, or `fake-hardware` in tests). */
  ironicDriver: string;
  /** Ironic boot interface for new nodes (IRONIC_ENROL_BOOT_INTERFACE); undefined: Ironic's default. */
  ironicBootInterface?: string | undefined;
  /** The IPA deploy kernel and ramdisk (Glance image UUIDs or URLs) new nodes boot to be inspected and deployed. */
  deployImages?: { kernel: string; ramdisk: string } | undefined;
  /** Where the BMC credentials of a device are read (BMC_CREDENTIALS_DIR), for the types that log in. */
  bmcCredentials?: BmcCredentialSource | undefined;
  /** How the redfish driver_info is written (address template, system id, CA verification). */
  redfish: RedfishSettings;
  /** The enrol target project's id in the instance's Keystone: the owner of new nodes. */
  enrolOwner?: ((instance: IronicInstance) => Promise<string>) | undefined;
  /** dnsmasq --dhcp-hostsdir, for sites where Fleet Manager manages DHCP. */
  dhcpHostsDir?: string | undefined;
  /** How a burn-in runs its hardware tests on the GPU partition (see burn-in-script.ts). */
  burnIn: {
    images: HardwareTestImages;
    /** What runs one test's image (FM_TEST_IMAGE; FM_TEST, FM_BURNIN_DURATION_S, FM_DEVICE are set). */
    command: string;
    /** The folder the compute nodes write results to and this worker reads (a shared filesystem). */
    outputDir?: string | undefined;
  };
  /** Where burn-in artifacts are uploaded (the workflow agent's object storage), if configured. */
  artifacts?: ArtifactStore | undefined;
  pollIntervalMs: number;
}

/** The Ironic instance the device's role maps to, as this worker reaches it. */
export function ironicFor(deps: Pick<ActivityDeps, "ironic">, d: DevicePlan): IronicClient {
  if (!d.ironicInstance) throw badInput(`${d.name} has no device role that maps to an Ironic instance`);
  const client = deps.ironic[d.ironicInstance];
  if (!client)
    throw notConfigured(
      `this worker has no ${d.ironicInstance} Ironic configured (OPENSTACK_${d.ironicInstance.toUpperCase()}_CLOUDS_FILE), but ${d.name} needs it`,
    );
  return client;
}

export function netboxOf(deps: Pick<ActivityDeps, "netbox">): NetboxClient {
  if (!deps.netbox) throw notConfigured("this worker has no NetBox configured (NETBOX_URL, NETBOX_TOKEN)");
  return deps.netbox;
}

export function slurmOf(deps: Pick<ActivityDeps, "slurm">): SlurmClient {
  if (!deps.slurm) throw notConfigured("this worker has no SLURM configured (SLURM_URL, SLURM_TOKEN_FILE)");
  return deps.slurm;
}

export function novaOf(deps: Pick<ActivityDeps, "nova" | "slurmAdoption">): {
  nova: NovaClient;
  adoption: NonNullable<ActivityDeps["slurmAdoption"]>;
} {
  if (!deps.nova || !deps.slurmAdoption)
    throw notConfigured(
      "this worker has no OpenStack SLURM project configured (OPENSTACK_SLURM_CLOUDS_FILE, OPENSTACK_SLURM_PROJECT_NAME, OPENSTACK_SLURM_NETWORK, OPENSTACK_SLURM_KEY_NAME)",
    );
  return { nova: deps.nova, adoption: deps.slurmAdoption };
}

export function netboxIdOf(d: DevicePlan): number {
  if (d.netboxId === null) throw badInput(`${d.name} has no NetBox id`);
  return d.netboxId;
}

/** How Ironic finds the device's node: its uuid once known, else its name. */
export const nodeRef = (d: DevicePlan): string => d.ironicNodeUuid ?? d.name;
