/**
 * The worker's source clients, from its configuration: each Ironic instance whose clouds.yaml
 * is set, NetBox and slurmrestd when configured. A source the worker lacks fails only the
 * activities that need it (NotConfigured).
 */
import { readFileSync } from "node:fs";
import {
  CloudConfigError,
  NetboxClient,
  SlurmClient,
  loadCloud,
  novaClientFor,
  openstackFor,
  type IronicClient,
  type KeystoneSession,
} from "@fm/clients";
import { IRONIC_INSTANCES, type IronicInstance } from "@fm/domain";
import { ConfigError } from "../runtime/config.ts";
import { slurmDrainer } from "../slurm-agent/agent.ts";
import type { ActivityDeps } from "./activities/index.ts";
import type { WorkerConfig } from "./env.ts";

export type SourceClients = Pick<
  ActivityDeps,
  "ironic" | "netbox" | "slurm" | "enrolOwner" | "nova" | "slurmAdoption" | "slurmNodes"
>;

type Retry = <T>(what: string, fn: () => Promise<T>) => Promise<T | undefined>;

/** Undefined when stopped while an Ironic's Keystone was being waited for. A broken clouds.yaml is a ConfigError. */
export async function sourceClients(config: WorkerConfig, retry: Retry): Promise<SourceClients | undefined> {
  const ironic: Partial<Record<IronicInstance, IronicClient>> = {};
  const keystone: Partial<Record<IronicInstance, KeystoneSession>> = {};
  for (const instance of IRONIC_INSTANCES) {
    const key = instance === "overcloud" ? "OVERCLOUD" : "UNDERCLOUD";
    const variable = `OPENSTACK_${key}_CLOUDS_FILE`;
    const file = config[`OPENSTACK_${key}_CLOUDS_FILE`];
    if (!file) continue;
    const cloud = configured(variable, () => loadCloud(file, config[`OPENSTACK_${key}_CLOUD`]));
    // With an application credential this authenticates to Keystone now: retried while it is down.
    const clients = await retry(`authenticate to the ${instance} Ironic`, () =>
      configured(variable, () => openstackFor(cloud, { timeoutMs: config.FM_HTTP_TIMEOUT_MS })),
    );
    if (!clients) return undefined;
    ironic[instance] = clients.ironic;
    if (clients.keystone) keystone[instance] = clients.keystone;
    else if (config.IRONIC_ENROL_TARGET_PROJECT_NAME)
      throw new ConfigError([
        `IRONIC_ENROL_TARGET_PROJECT_NAME: the ${instance} cloud in ${file} has no Keystone (auth_type none) to resolve it through`,
      ]);
  }
  const project = config.IRONIC_ENROL_TARGET_PROJECT_NAME;
  const enrolOwner = project ? projectIdsOf(keystone, project) : undefined;
  const netbox =
    config.NETBOX_URL && config.NETBOX_TOKEN
      ? new NetboxClient({ url: config.NETBOX_URL, token: config.NETBOX_TOKEN, timeoutMs: config.FM_HTTP_TIMEOUT_MS })
      : undefined;
  const slurmTokenFile = config.SLURM_TOKEN_FILE;
  const slurm =
    config.SLURM_URL && slurmTokenFile
      ? new SlurmClient({
          baseUrl: config.SLURM_URL,
          apiVersion: config.SLURM_API_VERSION,
          user: config.SLURM_USER,
          token: () => readFileSync(slurmTokenFile, "utf8").trim(),
          timeoutMs: config.FM_HTTP_TIMEOUT_MS,
        })
      : undefined;
  const adoption = await slurmAdoptionOf(config, retry);
  if (adoption === null) return undefined;
  const slurmNodes =
    slurm && slurmTokenFile ? slurmDrainer({ ...config, SLURM_TOKEN_FILE: slurmTokenFile }, slurm) : undefined;
  return { ironic, netbox, slurm, enrolOwner, slurmNodes, ...adoption };
}

/**
 * Nova in the SLURM project (openstack.slurm), when configured. The credential must be scoped to
 * OPENSTACK_SLURM_PROJECT_NAME: servers made in another project would be a stranger's. Null when
 * stopped while Keystone was being waited for.
 */
async function slurmAdoptionOf(
  config: WorkerConfig,
  retry: Retry,
): Promise<Pick<SourceClients, "nova" | "slurmAdoption"> | null> {
  const file = config.OPENSTACK_SLURM_CLOUDS_FILE;
  if (!file) return {};
  const variable = "OPENSTACK_SLURM_CLOUDS_FILE";
  const cloud = configured(variable, () => loadCloud(file, config.OPENSTACK_SLURM_CLOUD));
  const made = await retry("authenticate to the SLURM project's Keystone", () =>
    configured(variable, () => novaClientFor(cloud, { timeoutMs: config.FM_HTTP_TIMEOUT_MS })),
  );
  if (!made) return null;
  const wanted = config.OPENSTACK_SLURM_PROJECT_NAME!;
  if (made.project?.name !== wanted)
    throw new ConfigError([
      `OPENSTACK_SLURM_PROJECT_NAME: the credential in ${file} is scoped to project ${made.project ? JSON.stringify(made.project.name) : "(none named)"}, not ${JSON.stringify(wanted)}`,
    ]);
  return {
    nova: made.nova,
    slurmAdoption: {
      networkId: config.OPENSTACK_SLURM_NETWORK!,
      keyName: config.OPENSTACK_SLURM_KEY_NAME!,
      registerTimeoutMs: config.FM_SLURM_REGISTER_TIMEOUT_S * 1000,
    },
  };
}

/** The project's id in each instance's Keystone, asked once per instance (a failure is asked again). */
function projectIdsOf(
  keystone: Partial<Record<IronicInstance, KeystoneSession>>,
  name: string,
): (instance: IronicInstance) => Promise<string> {
  const known = new Map<IronicInstance, string>();
  return async (instance) => {
    const id = known.get(instance) ?? (await keystone[instance]!.projectId(name));
    known.set(instance, id);
    return id;
  };
}

/** `fn`'s result; a CloudConfigError becomes a ConfigError naming the variable (exit 2). */
function configured<T>(variable: string, fn: () => T): T {
  const named = (err: unknown) =>
    err instanceof CloudConfigError ? new ConfigError([`${variable}: ${err.message}`]) : err;
  try {
    const result = fn();
    return (result instanceof Promise ? result.catch((err: unknown) => Promise.reject(named(err))) : result) as T;
  } catch (err) {
    throw named(err);
  }
}
