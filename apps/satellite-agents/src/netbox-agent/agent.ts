/**
 * The netbox agent: NetBox is the source of truth for what hardware exists. One reflector
 * (./reflector.ts, store `netbox-devices`) pushes the site's devices in the NetBox clusters the
 * hub's NetBox settings list for the site, with their roles (device class from the hub's role
 * mapping), types, locations, racks, interfaces (MACs, InfiniBand GUIDs from labels, cable peers)
 * and BMC addresses, to `PUT /sites/{id}/reflections/netbox/`, reading NetBox in full only when
 * its change log says something relevant changed, or the settings did. NETBOX_CLUSTER and
 * NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING are fallbacks for a hub that lists nothing for the site.
 */
import { z } from "zod";
import { NetboxClient, type HubClient } from "@fm/clients";
import type { NetboxItem } from "@fm/domain";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { RoleClassMapping } from "./mapping.ts";
import type { NetboxScope } from "./read.ts";
import { NetboxReflector, type SiteSettings } from "./reflector.ts";

const env = {
  NETBOX_URL: z.url().describe("NetBox base URL"),
  NETBOX_TOKEN: z.string().min(1).describe("NetBox API token (v1, or v2 nbt_…)"),
  NETBOX_CLUSTER: z
    .string()
    .min(1)
    .optional()
    .describe("Fallback NetBox cluster (name or id) when the hub's NetBox settings list none for the site"),
  NETBOX_SITE: z.string().min(1).optional().describe("NetBox site slug; default FM_SITE"),
  NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: RoleClassMapping.describe(
    "JSON: NetBox role slug → device class, below the hub's mapping (which wins)",
  ),
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
  const netboxSite = ctx.config.NETBOX_SITE ?? ctx.site.slug;
  return new NetboxReflector({
    hub: ctx.hub,
    netbox,
    site: ctx.site,
    scope,
    settings: () => siteSettings(ctx.hub, ctx.site.slug, ctx.config),
    resolveClusters: (clusters) => resolveScope(netbox, netboxSite, clusters).then((s) => s.clusterIds),
    resyncIntervalMs: ctx.config.NETBOX_RESYNC_INTERVAL_S * 1000,
    log: ctx.log,
    metrics: ctx.metrics,
    now: ctx.now,
  });
}

/** What the agent of one site follows: the hub's NetBox settings for it, over the agent's fallbacks. */
export async function siteSettings(
  hub: Pick<HubClient, "netboxSettings">,
  siteSlug: string,
  fallback: { NETBOX_CLUSTER?: string | undefined; NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: RoleClassMapping },
): Promise<SiteSettings> {
  const s = await hub.netboxSettings();
  const filter = s.deviceFilters.find((f) => f.site === siteSlug);
  return {
    clusters: filter?.clusters ?? (fallback.NETBOX_CLUSTER ? [fallback.NETBOX_CLUSTER] : []),
    roles: { ...fallback.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING, ...s.deviceRoleClassMapping },
  };
}

/** The NetBox site and clusters (names or ids) this agent syncs; all must exist. */
export async function resolveScope(netbox: NetboxClient, siteSlug: string, clusters: string[]): Promise<NetboxScope> {
  const sites = await netbox.sites({ slug: siteSlug });
  if (sites.length !== 1)
    throw new FatalSetupError(
      `NetBox has no site with slug '${siteSlug}' (set NETBOX_SITE when it differs from FM_SITE)`,
    );
  if (!clusters.length)
    throw new FatalSetupError(
      `no NetBox cluster to ingest for site '${siteSlug}': add the site to the hub's NetBox settings (FM_NETBOX_DEVICE_FILTERS, or PUT /api/v1/netbox/settings)`,
    );
  const ids = clusters.filter((c) => /^\d+$/.test(c)).map(Number);
  const names = clusters.filter((c) => !/^\d+$/.test(c));
  const found = [
    ...(ids.length ? await netbox.clusters({ id: ids }) : []),
    ...(names.length ? await netbox.clusters({ name: names }) : []),
  ];
  const missing = clusters.filter((c) => !found.some((f) => String(f.id) === c || f.name === c));
  if (missing.length)
    throw new FatalSetupError(
      `NetBox has no cluster ${missing.map((c) => `'${c}'`).join(", ")}: create it under Virtualization → Clusters (rollout guide, "Create the NetBox Cluster")`,
    );
  return {
    siteId: sites[0]!.id,
    siteName: sites[0]!.name,
    clusterIds: [...new Set(found.map((f) => f.id))].sort((a, b) => a - b),
  };
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
    const settings = await siteSettings(ctx.hub, ctx.site.slug, ctx.config);
    const scope = await resolveScope(netbox, ctx.config.NETBOX_SITE ?? ctx.site.slug, settings.clusters);
    // The release decides how the change log is filtered (NetboxClient.objectChanges).
    const netboxVersion = await netbox.release();
    ctx.log.info(
      { netboxVersion, netboxSiteId: scope.siteId, netboxClusterIds: scope.clusterIds, store: "netbox-devices" },
      "Starting reflector for NetBox",
    );
    return [reflector(netboxReflector(ctx, netbox, scope))];
  },
});
