/**
 * The netbox agent: NetBox is the source of truth for what hardware exists. One reflector
 * (store `netbox-devices`) pushes the site's devices in the configured NetBox cluster, with
 * their roles (device class from NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING), types, locations,
 * racks, interfaces (MACs, InfiniBand GUIDs from labels, cable peers) and BMC addresses, to
 * `PUT /sites/{id}/reflections/netbox/`.
 *
 * Reading 10,000 devices with 80,000 interfaces takes NetBox tens of seconds, so the agent
 * does not do it every cycle. Every cycle (FM_REFLECT_INTERVAL_S) it polls NetBox's change log
 * and the MAC addresses edited since the last poll (NetBox 4.2+ keeps MACs apart from
 * interfaces, and their edits are what operators make most). A relevant change, or
 * NETBOX_RESYNC_INTERVAL_S since the last full read, triggers a full read; otherwise the last
 * view is pushed again — the change log vouches that it is still NetBox's view now.
 *
 * A token without view permission on MAC addresses gets one clear error per poll, and the
 * rest of the sync goes on (MACs then come from the interfaces' primary MAC).
 */
import { z } from "zod";
import {
  NetboxClient,
  NetboxPermissionError,
  NetboxUnavailableError,
  NetboxApiError,
  type NetboxDevice,
  type NetboxInterface,
  type NetboxObjectChange,
} from "@fm/clients";
import type { NetboxItem } from "@fm/domain";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { describeError } from "../runtime/log.ts";
import { reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { RoleClassMapping, toNetboxItem, type MapContext, type Peer } from "./mapping.ts";

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

/** Change-log object types whose edits can change what the agent pushes. */
const WATCHED = [
  "dcim.device",
  "dcim.interface",
  "dcim.cable",
  "dcim.macaddress",
  "ipam.ipaddress",
  "dcim.rack",
  "dcim.location",
  "dcim.devicetype",
  "dcim.devicerole",
  "extras.tag",
];
/** Clock skew and commit latency between NetBox's change time and our poll. */
const OVERLAP_MS = 5_000;

export interface NetboxView {
  items: NetboxItem[];
  deviceIds: Set<number>;
  interfaceIds: Set<number>;
}

export function netboxReflector(
  ctx: AgentContext<NetboxEnv>,
  netbox: NetboxClient,
  scope: { siteId: number; clusterId: number },
): ReflectorSpec<NetboxItem> & { fullReads: () => number } {
  const { config, log, hub, site, metrics, now } = ctx;
  const store = "netbox-devices";
  let view: NetboxView | undefined;
  let lastFullRead = 0;
  let lastPoll: Date | undefined;
  let fullReads = 0;
  const unmapped = new Set<string>();

  /** Did anything this site's view depends on change since `since`? */
  async function changedSince(since: Date, known: NetboxView): Promise<string | undefined> {
    const changes = await netbox.objectChanges({
      since: new Date(since.getTime() - OVERLAP_MS),
      changedObjectType: WATCHED,
    });
    const hit = changes.find((c) => relevant(c, known, scope.clusterId));
    if (hit) return `${hit.changed_object_type} #${hit.changed_object_id} ${hit.action.value}`;
    try {
      const macs = await netbox.macAddresses({ last_updated__gte: new Date(since.getTime() - OVERLAP_MS) });
      const mac = macs.find((m) => m.assigned_object_id !== null && known.interfaceIds.has(m.assigned_object_id));
      if (mac) return `dcim.macaddress #${mac.id} edited`;
    } catch (err) {
      if (!(err instanceof NetboxPermissionError)) throw err;
      metrics.errors.inc({ store, reason: "netbox_permission" });
      log.error(
        { store, objectType: err.objectType, err: describeError(err) },
        "NetBox token may not view MAC addresses (dcim.macaddress): MAC address edits wait for the full resync; grant view on dcim.macaddress",
      );
    }
    return undefined;
  }

  async function fullRead(): Promise<NetboxView> {
    const devices = await netbox.devices({
      cluster_id: scope.clusterId,
      site_id: scope.siteId,
      exclude: "config_context",
    });
    const deviceIds = new Set(devices.map((d) => d.id));
    const interfaces = devices.length ? await netbox.interfaces({ site_id: scope.siteId }) : [];
    const mine = interfaces.filter((i) => deviceIds.has(i.device.id));
    const byDevice = new Map<number, NetboxInterface[]>();
    for (const i of mine) byDevice.set(i.device.id, [...(byDevice.get(i.device.id) ?? []), i]);
    const [deviceTypes, cablePeers, macs, mgmtIps] = await Promise.all([
      netbox.deviceTypes(),
      cablePeersOf(netbox, scope.siteId),
      macsOf(mine),
      mgmtIpsOf(devices, byDevice),
    ]);
    const mctx: MapContext = {
      roles: config.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING,
      deviceTypes: new Map(deviceTypes.map((t) => [t.id, t])),
      macs,
      cablePeers,
      mgmtIps,
    };
    const items: NetboxItem[] = [];
    for (const d of devices) {
      if (!(d.role.slug in config.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING) && !unmapped.has(d.role.slug)) {
        unmapped.add(d.role.slug);
        log.warn(
          { store, role: d.role.slug },
          `NetBox role '${d.role.slug}' is not in NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: its devices get device class OTHER (no Ironic instance)`,
        );
      }
      const out = toNetboxItem(
        d,
        (byDevice.get(d.id) ?? []).sort((a, b) => a.name.localeCompare(b.name)),
        mctx,
      );
      if ("item" in out) items.push(out.item);
      else log.warn({ store, device: out.skipped, reason: out.reason }, "NetBox device skipped");
    }
    fullReads++;
    return { items, deviceIds, interfaceIds: new Set(mine.map((i) => i.id)) };
  }

  /** MACs of interfaces without a primary MAC, from dcim.macaddress (403 tolerated). */
  async function macsOf(ifaces: NetboxInterface[]): Promise<Map<number, string>> {
    const missing = ifaces.filter((i) => !i.primary_mac_address && !i.mac_address).map((i) => i.id);
    const out = new Map<number, string>();
    try {
      for (let k = 0; k < missing.length; k += 100) {
        for (const m of await netbox.macAddresses({ interface_id: missing.slice(k, k + 100) }))
          if (m.assigned_object_id !== null && !out.has(m.assigned_object_id))
            out.set(m.assigned_object_id, m.mac_address);
      }
    } catch (err) {
      if (!(err instanceof NetboxPermissionError)) throw err;
      metrics.errors.inc({ store, reason: "netbox_permission" });
      log.error(
        { store, objectType: err.objectType },
        "NetBox token may not view MAC addresses (dcim.macaddress): interfaces without a primary MAC are pushed without one",
      );
    }
    return out;
  }

  /** BMC addresses for devices without an OOB IP: the IP on their management-only interface. */
  async function mgmtIpsOf(
    devices: NetboxDevice[],
    byDevice: Map<number, NetboxInterface[]>,
  ): Promise<Map<number, string>> {
    const wanted = devices
      .filter((d) => !d.oob_ip && (byDevice.get(d.id) ?? []).some((i) => i.mgmt_only))
      .map((d) => d.id);
    const out = new Map<number, string>();
    for (let k = 0; k < wanted.length; k += 100) {
      for (const ip of await netbox.ipAddresses({ device_id: wanted.slice(k, k + 100) })) {
        const dev = ip.assigned_object?.device?.id;
        const iface = dev !== undefined ? byDevice.get(dev)?.find((i) => i.id === ip.assigned_object_id) : undefined;
        if (dev !== undefined && iface?.mgmt_only && !out.has(dev)) out.set(dev, ip.address.split("/")[0]!);
      }
    }
    return out;
  }

  return {
    store,
    fullReads: () => fullReads,
    classifyListError: (err) =>
      err instanceof NetboxPermissionError
        ? "netbox_permission"
        : err instanceof NetboxUnavailableError
          ? "netbox_unavailable"
          : err instanceof NetboxApiError
            ? "netbox_http_error"
            : "list_failed",
    async list() {
      const pollStart = new Date(now());
      let reason: string | undefined;
      if (!view) reason = "first read";
      else if (now() - lastFullRead >= config.NETBOX_RESYNC_INTERVAL_S * 1000) reason = "resync interval";
      else reason = await changedSince(lastPoll!, view);
      if (reason) {
        const t0 = performance.now();
        view = await fullRead();
        lastFullRead = now();
        log.info(
          { store, reason, devices: view.items.length, ms: Math.round(performance.now() - t0) },
          "NetBox full read",
        );
      }
      lastPoll = pollStart;
      return view!.items;
    },
    push: async (items, observedAt) => {
      const r = await hub.pushReflection(site.id, "netbox", { observedAt: observedAt.toISOString(), items });
      return {
        created: r.created,
        updated: r.updated,
        unchanged: r.unchanged,
        missing: r.missing,
        unmatched: r.unmatched,
      };
    },
  };
}

/** Is this change-log record about something in (or entering) this site's view? */
export function relevant(c: NetboxObjectChange, known: NetboxView, clusterId: number): boolean {
  const data = [c.prechange_data, c.postchange_data].filter((d): d is Record<string, unknown> => d !== null);
  const ref = (v: unknown) =>
    typeof v === "number"
      ? v
      : typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "number"
        ? (v as { id: number }).id
        : undefined;
  switch (c.changed_object_type) {
    case "dcim.device":
      return known.deviceIds.has(c.changed_object_id) || data.some((d) => ref(d.cluster) === clusterId);
    case "dcim.interface":
      return known.interfaceIds.has(c.changed_object_id) || data.some((d) => known.deviceIds.has(ref(d.device) ?? -1));
    case "dcim.macaddress":
    case "ipam.ipaddress":
      return (
        data.some((d) => known.interfaceIds.has(ref(d.assigned_object_id) ?? ref(d.interface) ?? -1)) ||
        data.length === 0
      );
    default:
      // Cables, racks, locations, types, roles, tags: rare, and cheap to over-react to.
      return true;
  }
}

/** Interface id → the far end of its cable, from the site's cables. */
async function cablePeersOf(netbox: NetboxClient, siteId: number): Promise<Map<number, Peer>> {
  const out = new Map<number, Peer>();
  const end = (t: { object_type: string; object: unknown }) => {
    const o = t.object as { id?: number; name?: string; device?: { name?: string } };
    return t.object_type === "dcim.interface" && typeof o.id === "number" && o.name && o.device?.name
      ? { id: o.id, peer: { device: o.device.name, name: o.name } }
      : undefined;
  };
  for (const cable of await netbox.cables({ site_id: siteId })) {
    const a = cable.a_terminations.map(end).filter((x) => x !== undefined);
    const b = cable.b_terminations.map(end).filter((x) => x !== undefined);
    if (a.length === 1 && b.length === 1) {
      out.set(a[0]!.id, b[0]!.peer);
      out.set(b[0]!.id, a[0]!.peer);
    }
  }
  return out;
}

/** The NetBox site and cluster this agent syncs; both must exist. */
export async function resolveScope(
  netbox: NetboxClient,
  siteSlug: string,
  cluster: string,
): Promise<{ siteId: number; clusterId: number }> {
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
    ctx.log.info(
      { netboxSiteId: scope.siteId, netboxClusterId: scope.clusterId, store: "netbox-devices" },
      "Starting reflector for NetBox",
    );
    return [reflector(netboxReflector(ctx, netbox, scope))];
  },
});
