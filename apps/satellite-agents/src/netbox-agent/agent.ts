/**
 * The netbox agent: NetBox is the source of truth for what hardware exists. One reflector
 * (./reflector.ts, store `netbox-devices`) pushes the site's devices in the configured NetBox
 * cluster, with their roles (device class from NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING), types,
 * locations, racks, interfaces (MACs, InfiniBand GUIDs from labels, cable peers) and BMC
 * addresses, to `PUT /sites/{id}/reflections/netbox/`, reading NetBox in full only when its
 * change log says something relevant changed.
 */
import { z } from "zod";
import { NetboxClient } from "@fm/clients";
import type { NetboxItem } from "@fm/domain";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { RoleClassMapping } from "./mapping.ts";
import type { NetboxScope } from "./read.ts";
import { NetboxReflector } from "./reflector.ts";

const env = {
  NETBOX_URL: z.url().describe("NetBox base URL"),
  NETBOX_TOKEN: z.string().min(1).describe("NetBox API token (v1, or v2 nbt_…)"),
  NETBOX_CLUSTER: z
    .string()
    .min(1)
    .describe("NetBox virtualization cluster (name or id) whose devices this deployment ingests"),
  NETBOX_SITE: z.string().min(1).optional().describe("NetBox site slug; default FM_SITE"),
  NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: RoleClassMapping.describe("JSON: NetBox role slug → device class"),
  NETBOX_RESYNC_INTERVAL_S: z.coerce
    .number()
    .positive()
    .default(600)
    .describe("Full read at least this often, changes or not"),
  NETBOX_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(1000),
};
type NetboxEnv = z.infer<z.ZodObject<typeof env>>;

/** The NetBox reflector of the agent's site, as the agent builds it. */
export function netboxReflector(
  ctx: AgentContext<NetboxEnv>,
  netbox: NetboxClient,
  scope: NetboxScope,
): ReflectorSpec<NetboxItem> {
  return new NetboxReflector({
    hub: ctx.hub,
    netbox,
    site: ctx.site,
    scope,
    roles: ctx.config.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING,
    resyncIntervalMs: ctx.config.NETBOX_RESYNC_INTERVAL_S * 1000,
    log: ctx.log,
    metrics: ctx.metrics,
    now: ctx.now,
  });
}

/** The NetBox site and cluster this agent syncs; both must exist. */
export async function resolveScope(netbox: NetboxClient, siteSlug: string, cluster: string): Promise<NetboxScope> {
  const sites = await netbox.sites({ slug: siteSlug });
  if (sites.length !== 1)
    throw new FatalSetupError(
      `NetBox has no site with slug '${siteSlug}' (set NETBOX_SITE when it differs from FM_SITE)`,
    );
  const clusters = /^\d+$/.test(cluster)
    ? await netbox.clusters({ id: Number(cluster) })
    : await netbox.clusters({ name: cluster });
  if (clusters.length !== 1)
    throw new FatalSetupError(
      `NetBox has no cluster '${cluster}' (NETBOX_CLUSTER): create it under Virtualization → Clusters (rollout guide, "Create the NetBox Cluster")`,
    );
  return { siteId: sites[0]!.id, clusterId: clusters[0]!.id };
}

export const netboxAgent = loopAgent({
  kind: "netbox",
  env,
  async setup(ctx) {
    const netbox = new NetboxClient({
      url: ctx.config.NETBOX_URL,
      token: ctx.config.NETBOX_TOKEN,
      timeoutMs: ctx.config.FM_HTTP_TIMEOUT_MS,
      pageSize: ctx.config.NETBOX_PAGE_SIZE,
    });
    const scope = await resolveScope(netbox, ctx.config.NETBOX_SITE ?? ctx.site.slug, ctx.config.NETBOX_CLUSTER);
    // The release decides how the change log is filtered (NetboxClient.objectChanges).
    const netboxVersion = await netbox.release();
    ctx.log.info(
      { netboxVersion, netboxSiteId: scope.siteId, netboxClusterId: scope.clusterId, store: "netbox-devices" },
      "Starting reflector for NetBox",
    );
    return [reflector(netboxReflector(ctx, netbox, scope))];
  },
});
