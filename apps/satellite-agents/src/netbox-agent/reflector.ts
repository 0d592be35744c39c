/**
 * The NetBox reflector (store `netbox-devices`): the site's devices in the NetBox clusters the
 * hub's NetBox settings list for it, pushed to `PUT /sites/{id}/reflections/netbox/` with NetBox's name and ids of the site
 * (the hub names a site it created from its NetBox settings with them).
 *
 * Reading 10,000 devices with 80,000 interfaces takes NetBox tens of seconds, so the reflector
 * does not do it every cycle. Every cycle it polls NetBox's change log and the MAC addresses
 * edited since the last poll (NetBox 4.2+ keeps MACs apart from interfaces, and their edits are
 * what operators make most). A relevant change (./changes.ts), or NETBOX_RESYNC_INTERVAL_S since
 * the last full read, triggers a full read (./read.ts); otherwise the last view is pushed again —
 * the change log vouches that it is still NetBox's view now.
 *
 * A token without view permission on MAC addresses gets one clear error per poll, and the
 * rest of the sync goes on (MACs come from the interfaces, which list theirs). A token without
 * view permission on the change log (core.view_objectchange) gets one clear error per poll too:
 * edits then wait for the resync, and the view pushed between resyncs carries the time of the
 * last full read, the last moment it is known to be NetBox's, as its observedAt.
 */
import {
  NetboxApiError,
  NetboxPermissionError,
  NetboxUnavailableError,
  type HubClient,
  type NetboxClient,
} from "@fm/clients";
import type { NetboxItem, Site } from "@fm/domain";
import type { Logger } from "pino";
import { describeError } from "../runtime/log.ts";
import type { AgentMetrics } from "../runtime/metrics.ts";
import { pushView, type ReflectorSpec } from "../runtime/reflector.ts";
import { WATCHED, relevant, type NetboxView } from "./changes.ts";
import { toNetboxItem, type RoleClassMapping } from "./mapping.ts";
import { readSite, type NetboxScope } from "./read.ts";

/** Clock skew and commit latency between NetBox's change time and our poll. */
const OVERLAP_MS = 5_000;

/** What the hub's NetBox settings say for this site. */
export interface SiteSettings {
  clusters: string[];
  roles: RoleClassMapping;
}

export interface NetboxReflectorDeps {
  hub: HubClient;
  netbox: NetboxClient;
  site: Pick<Site, "id">;
  /** The scope at start; the clusters follow the settings. */
  scope: NetboxScope;
  /** The hub's NetBox settings for this site, read every cycle (a new cluster or role needs no redeploy). */
  settings: () => Promise<SiteSettings>;
  /** NetBox cluster names or ids -> ids (a missing one throws). */
  resolveClusters: (clusters: string[]) => Promise<number[]>;
  /** Full read at least this often, changes or not. */
  resyncIntervalMs: number;
  log: Logger;
  metrics: AgentMetrics;
  now: () => number;
}

export class NetboxReflector implements ReflectorSpec<NetboxItem> {
  readonly store = "netbox-devices";
  private view: NetboxView | undefined;
  private lastFullRead = 0;
  private lastPoll: Date | undefined;
  /** Up to when the view is known to be NetBox's: the last full read, or the last change-log poll that found nothing. */
  private vouchedAt: Date | undefined;
  private readonly unmapped = new Set<string>();
  private scope: NetboxScope;
  private clusters: string | undefined;
  private roles: RoleClassMapping = {};

  constructor(private readonly deps: NetboxReflectorDeps) {
    this.scope = deps.scope;
  }

  /** Follows the hub's settings: the reason for a full read when the clusters or the mapping changed. */
  private async followSettings(): Promise<string | undefined> {
    const s = await this.deps.settings();
    const clusters = JSON.stringify([...s.clusters].sort());
    const rolesChanged = JSON.stringify(s.roles) !== JSON.stringify(this.roles);
    this.roles = s.roles;
    if (this.clusters === undefined) this.clusters = clusters;
    if (clusters !== this.clusters) {
      this.scope = { ...this.scope, clusterIds: await this.deps.resolveClusters(s.clusters) };
      this.clusters = clusters;
      return "NetBox settings: clusters changed";
    }
    return rolesChanged && this.view ? "NetBox settings: role mapping changed" : undefined;
  }

  async list(): Promise<NetboxItem[]> {
    const { now, resyncIntervalMs, log } = this.deps;
    const pollStart = new Date(now());
    let reason = await this.followSettings();
    let vouched = true;
    if (reason) {
      // A full read follows the settings.
    } else if (!this.view) reason = "first read";
    else if (now() - this.lastFullRead >= resyncIntervalMs) reason = "resync interval";
    else ({ reason, vouched } = await this.changedSince(this.lastPoll!, this.view));
    if (reason) {
      const t0 = performance.now();
      this.view = await this.fullRead();
      this.lastFullRead = now();
      log.info(
        { store: this.store, reason, devices: this.view.items.length, ms: Math.round(performance.now() - t0) },
        "NetBox full read",
      );
    }
    if (reason || vouched) this.vouchedAt = pollStart;
    this.lastPoll = pollStart;
    return this.view!.items;
  }

  push(items: NetboxItem[], observedAt: Date): Promise<Record<string, unknown>> {
    const at = this.vouchedAt && this.vouchedAt < observedAt ? this.vouchedAt : observedAt;
    const { siteId, siteName, clusterIds } = this.scope;
    const site = {
      name: siteName,
      netboxSiteId: siteId,
      netboxClusterId: clusterIds.length === 1 ? clusterIds[0]! : null,
    };
    return pushView(this.deps.hub, this.deps.site.id, "netbox", items, at, site);
  }

  classifyListError(err: unknown): string {
    if (err instanceof NetboxPermissionError) return "netbox_permission";
    if (err instanceof NetboxUnavailableError) return "netbox_unavailable";
    return err instanceof NetboxApiError ? "netbox_http_error" : "list_failed";
  }

  /**
   * Did anything this site's view depends on change since `since`? What, if so; `vouched` is
   * false when the change log could not be read, so nothing is known.
   */
  private async changedSince(since: Date, known: NetboxView): Promise<{ reason?: string; vouched: boolean }> {
    const { netbox } = this.deps;
    const scope = this.scope;
    const after = new Date(since.getTime() - OVERLAP_MS);
    let changes;
    try {
      changes = await netbox.objectChanges({ since: after, changedObjectType: WATCHED });
    } catch (err) {
      if (!(err instanceof NetboxPermissionError)) throw err;
      this.permissionDenied(
        err,
        "core.view_objectchange",
        "NetBox edits wait for the full resync (NETBOX_RESYNC_INTERVAL_S)",
        describeError(err),
      );
      return { vouched: false };
    }
    const hit = changes.find((c) => relevant(c, known, scope.clusterIds));
    if (hit)
      return { reason: `${hit.changed_object_type} #${hit.changed_object_id} ${hit.action.value}`, vouched: true };
    try {
      const macs = await netbox.macAddresses({ last_updated__gte: after });
      const mac = macs.find((m) => m.assigned_object_id !== null && known.interfaceIds.has(m.assigned_object_id));
      if (mac) return { reason: `dcim.macaddress #${mac.id} edited`, vouched: true };
    } catch (err) {
      if (!(err instanceof NetboxPermissionError)) throw err;
      this.permissionDenied(
        err,
        "dcim.view_macaddress",
        "MAC address edits wait for the full resync; grant view on dcim.macaddress",
        describeError(err),
      );
    }
    return { vouched: true };
  }

  private async fullRead(): Promise<NetboxView> {
    const { netbox, log } = this.deps;
    const { scope, roles } = this;
    const read = await readSite(netbox, scope);
    const items: NetboxItem[] = [];
    for (const d of read.devices) {
      if (!(d.role.slug in roles) && !this.unmapped.has(d.role.slug)) {
        this.unmapped.add(d.role.slug);
        log.warn(
          { store: this.store, role: d.role.slug },
          `NetBox role '${d.role.slug}' is not in the hub's role mapping (NetBox settings): its devices get device class OTHER (no Ironic instance)`,
        );
      }
      const interfaces = (read.interfaces.get(d.id) ?? []).sort((a, b) => a.name.localeCompare(b.name));
      const out = toNetboxItem(d, interfaces, { roles, ...read.context });
      if ("item" in out) items.push(out.item);
      else log.warn({ store: this.store, device: out.skipped, reason: out.reason }, "NetBox device skipped");
    }
    const interfaceIds = new Set([...read.interfaces.values()].flat().map((i) => i.id));
    return { items, deviceIds: new Set(read.devices.map((d) => d.id)), interfaceIds };
  }

  private permissionDenied(err: NetboxPermissionError, permission: string, consequence: string, detail?: object): void {
    this.deps.metrics.errors.inc({ store: this.store, reason: "netbox_permission" });
    this.deps.log.error(
      { store: this.store, objectType: err.objectType, permission, ...(detail ? { err: detail } : {}) },
      `NetBox token lacks ${permission} (${err.objectType}): ${consequence}`,
    );
  }
}
