/**
 * The OpenStack agent (rollout guide, "Dual-Ironic Deployments"): at start it asks the hub
 * which device roles are in use at its site and runs one Ironic reflector per instance those
 * roles need — `overcloud` for GPU_COMPUTE and CPU_BAREMETAL, `undercloud` for CPU_HYPERVISOR.
 * An instance no device needs is skipped before its clouds.yaml is even opened. Each
 * reflector lists every node (detail, marker pagination), applies hub cordons as Ironic
 * maintenance, and pushes the whole view to `PUT /sites/{id}/reflections/ironic-<instance>/`.
 */
import { z } from "zod";
import {
  CloudConfigError,
  IronicApiError,
  IronicUnavailableError,
  ironicClientFor,
  loadCloud,
  type IronicClient,
} from "@fm/clients";
import { IRONIC_INSTANCES, ironicInstanceFor, type IronicInstance, type IronicItem } from "@fm/domain";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { describeError } from "../runtime/log.ts";
import type { LoopSpec } from "../runtime/loop.ts";
import { pushView, reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { planMaintenance } from "./cordon.ts";
import { toReflectionItem } from "./nodes.ts";

const env = {
  OPENSTACK_OVERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the overcloud Ironic"),
  OPENSTACK_UNDERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the undercloud Ironic"),
  OPENSTACK_OVERCLOUD_CLOUD: z
    .string()
    .min(1)
    .optional()
    .describe("Cloud name in the overcloud file (default: its only cloud)"),
  OPENSTACK_UNDERCLOUD_CLOUD: z
    .string()
    .min(1)
    .optional()
    .describe("Cloud name in the undercloud file (default: its only cloud)"),
  IRONIC_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(1000).describe("Nodes per Ironic list request"),
  FM_CORDON_SYNC: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Mirror hub cordons as Ironic maintenance"),
};
type OpenStackEnv = z.infer<z.ZodObject<typeof env>>;

/** Which Ironic instances the site's roles in use need. */
export async function neededInstances(ctx: AgentContext<OpenStackEnv>): Promise<Map<IronicInstance, string[]>> {
  const roles = await ctx.hub.deviceRoles({ site: ctx.site.id, inUse: true });
  const needed = new Map<IronicInstance, string[]>();
  for (const role of roles) {
    const instance = ironicInstanceFor(role.deviceClass);
    if (instance && role.deviceCount > 0) needed.set(instance, [...(needed.get(instance) ?? []), role.slug]);
  }
  return needed;
}

function cloudsFile(
  config: OpenStackEnv,
  instance: IronicInstance,
): { file: string | undefined; cloud: string | undefined; variable: string } {
  return instance === "overcloud"
    ? {
        file: config.OPENSTACK_OVERCLOUD_CLOUDS_FILE,
        cloud: config.OPENSTACK_OVERCLOUD_CLOUD,
        variable: "OPENSTACK_OVERCLOUD_CLOUDS_FILE",
      }
    : {
        file: config.OPENSTACK_UNDERCLOUD_CLOUDS_FILE,
        cloud: config.OPENSTACK_UNDERCLOUD_CLOUD,
        variable: "OPENSTACK_UNDERCLOUD_CLOUDS_FILE",
      };
}

export function ironicReflector(
  ctx: AgentContext<OpenStackEnv>,
  instance: IronicInstance,
  ironic: IronicClient,
): ReflectorSpec<IronicItem> {
  const { hub, site, config } = ctx;
  const store = `ironic-nodes-${instance}`;
  return {
    store,
    list: async () => (await ironic.listNodes({ limit: config.IRONIC_PAGE_SIZE })).map(toReflectionItem),
    classifyListError: (err) =>
      err instanceof IronicUnavailableError
        ? "ironic_unavailable"
        : err instanceof IronicApiError
          ? "ironic_http_error"
          : "list_failed",
    ...(config.FM_CORDON_SYNC ? { reconcile: (items) => mirrorCordons(ctx, ironic, store, items) } : {}),
    push: (items, observedAt) => pushView(hub, site.id, `ironic-${instance}`, items, observedAt),
    // It reads Ironic: a hub outage must not restart it at every site, and its age is Ironic's.
    hubOutage: "ride-out",
  };
}

/**
 * The hub's cordons as Ironic maintenance (./cordon.ts plans it); returns the nodes as they are
 * now. One node failing does not hold back the others or the push: it is retried next cycle.
 */
async function mirrorCordons(
  { hub, site, log, metrics }: AgentContext<OpenStackEnv>,
  ironic: IronicClient,
  store: string,
  items: IronicItem[],
): Promise<IronicItem[]> {
  const cordoned = [];
  for await (const d of hub.allDevices({ site: site.id, cordoned: true }))
    cordoned.push({ name: d.name, nodeUuid: d.ironic.nodeUuid, reason: d.cordonReason });
  const plan = planMaintenance(items, cordoned);
  if (!plan.length) return items;
  const byUuid = new Map(items.map((i) => [i.uuid, i]));
  for (const step of plan) {
    try {
      if (step.action === "set") await ironic.setMaintenance(step.uuid, step.reason);
      else await ironic.clearMaintenance(step.uuid);
      // Ironic applies maintenance synchronously; push what the node now is.
      const item = byUuid.get(step.uuid)!;
      byUuid.set(
        step.uuid,
        step.action === "set"
          ? { ...item, maintenance: true, maintenanceReason: step.reason }
          : { ...item, maintenance: false, maintenanceReason: null },
      );
      log.info(
        { store, node: step.uuid, name: step.name, action: step.action },
        step.action === "set" ? "cordon: Ironic node put in maintenance" : "uncordon: Ironic maintenance cleared",
      );
    } catch (err) {
      metrics.errors.inc({ store, reason: "maintenance_failed" });
      log.error(
        { store, node: step.uuid, action: step.action, err: describeError(err) },
        "could not change Ironic maintenance",
      );
    }
  }
  return [...byUuid.values()];
}

export const openstackAgent = loopAgent({
  kind: "openstack",
  env,
  async setup(ctx) {
    const needed = await neededInstances(ctx);
    const loops: LoopSpec[] = [];
    for (const instance of IRONIC_INSTANCES) {
      const roles = needed.get(instance);
      if (!roles) {
        ctx.log.info(
          { instance },
          `Skipping Ironic instance '${instance}': no device at site '${ctx.site.slug}' needs it`,
        );
        continue;
      }
      const { file, cloud, variable } = cloudsFile(ctx.config, instance);
      if (!file)
        throw new FatalSetupError(
          `${variable} is not set, but roles ${roles.join(", ")} at site '${ctx.site.slug}' need the ${instance} Ironic`,
        );
      let client: IronicClient;
      try {
        // With an application credential this authenticates to Keystone now; an unreachable
        // Keystone is retried like any setup step, a broken clouds.yaml is not.
        client = await ironicClientFor(loadCloud(file, cloud), { timeoutMs: ctx.config.FM_HTTP_TIMEOUT_MS });
      } catch (err) {
        if (err instanceof CloudConfigError) throw new FatalSetupError(`${variable}: ${err.message}`);
        throw err;
      }
      ctx.log.info(
        { instance, roles, store: `ironic-nodes-${instance}` },
        `Starting reflector for Ironic instance '${instance}'`,
      );
      loops.push(reflector(ironicReflector(ctx, instance, client)));
    }
    return loops;
  },
});
