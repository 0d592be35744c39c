/**
 * Pre-rollout validation of a site's NetBox data (rollout guide, "Prepare NetBox and Config
 * Context"): what the netbox agent will ingest must be there and ready before the satellite
 * is enabled. Pure checks over the NetBox client; `check-cli.ts` prints them and sets the exit
 * code.
 */
import { NetboxMacAddressSchema, NetboxPermissionError, type NetboxClient, type NetboxDevice } from "@fm/clients";
import type { RoleClassMapping } from "./mapping.ts";

export type Severity = "ok" | "warn" | "fail";
export interface Finding {
  severity: Severity;
  check: string;
  message: string;
}

/** Statuses a device to be ingested may have: staged (to enrol) or active (enrolled). */
const READY = new Set(["staged", "active"]);
/** Present but not ready; reported, not fatal (out of service on purpose). */
const TOLERATED = new Set(["offline", "failed", "decommissioning"]);
export const REQUIRED_CONTEXT_KEYS = ["mlxconfig_config", "bios_config", "firmware_config"] as const;

type Add = (severity: Severity, check: string, message: string) => void;

export async function checkNetboxSite(
  netbox: NetboxClient,
  opts: { site: string; cluster: string; mapping: RoleClassMapping },
): Promise<Finding[]> {
  const out: Finding[] = [];
  const add: Add = (severity, check, message) => out.push({ severity, check, message });
  const devices = await checkScope(netbox, opts, add);
  if (!devices) return out;
  checkStatuses(devices, add);
  checkRoles(devices, opts.mapping, add);
  await checkConfigContext(netbox, devices, add);
  await checkMacPermission(netbox, devices[0]!, add);
  return out;
}

/** NetBox answers, the site and cluster exist, and the cluster has devices at the site (else undefined). */
async function checkScope(
  netbox: NetboxClient,
  opts: { site: string; cluster: string },
  add: Add,
): Promise<NetboxDevice[] | undefined> {
  const status = await netbox.status();
  add("ok", "netbox", `NetBox ${String(status["netbox-version"] ?? "?")} answers and accepts the token`);

  const sites = await netbox.sites({ slug: opts.site });
  if (sites.length !== 1) {
    add("fail", "site", `no NetBox site with slug '${opts.site}'`);
    return undefined;
  }
  const site = sites[0]!;
  add("ok", "site", `site '${site.slug}' (#${site.id}) exists`);

  const clusters = /^\d+$/.test(opts.cluster)
    ? await netbox.clusters({ id: Number(opts.cluster) })
    : await netbox.clusters({ name: opts.cluster });
  if (clusters.length !== 1) {
    add("fail", "cluster", `no NetBox cluster '${opts.cluster}': create it under Virtualization → Clusters`);
    return undefined;
  }
  const cluster = clusters[0]!;
  add("ok", "cluster", `cluster '${cluster.name}' (#${cluster.id}) exists`);

  const devices = await netbox.devices({ cluster_id: cluster.id, site_id: site.id, exclude: "config_context" });
  if (!devices.length) {
    add(
      "fail",
      "devices",
      `no device of site '${site.slug}' is in cluster '${cluster.name}': nothing would be ingested`,
    );
    return undefined;
  }
  add("ok", "devices", `${devices.length} device(s) of site '${site.slug}' in cluster '${cluster.name}'`);
  return devices;
}

/** Every device staged or active (out of service tolerated), and named. */
function checkStatuses(devices: NetboxDevice[], add: Add): void {
  const byStatus = new Map<string, NetboxDevice[]>();
  for (const d of devices) byStatus.set(d.status.value, [...(byStatus.get(d.status.value) ?? []), d]);
  for (const [s, list] of byStatus) {
    const names =
      list
        .slice(0, 5)
        .map((d) => d.name ?? `#${d.id}`)
        .join(", ") + (list.length > 5 ? ", …" : "");
    if (READY.has(s)) add("ok", "status", `${list.length} device(s) ${s}`);
    else if (TOLERATED.has(s))
      add("warn", "status", `${list.length} device(s) ${s} (ingested, out of service): ${names}`);
    else add("fail", "status", `${list.length} device(s) ${s}, not staged for ingestion: ${names}`);
  }
  const unnamed = devices.filter((d) => !d.name);
  if (unnamed.length)
    add(
      "fail",
      "names",
      `${unnamed.length} unnamed device(s) (#${unnamed
        .slice(0, 5)
        .map((d) => d.id)
        .join(", #")}): the hub needs a name`,
    );
}

/** Every role the devices have maps to a device class. */
function checkRoles(devices: NetboxDevice[], mapping: RoleClassMapping, add: Add): void {
  const roles = [...new Set(devices.map((d) => d.role.slug))].sort();
  for (const r of roles) {
    if (mapping[r]) add("ok", "roles", `role '${r}' → ${mapping[r]}`);
    else
      add(
        "fail",
        "roles",
        `role '${r}' has no device class in NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING (its devices would be OTHER, served by no Ironic)`,
      );
  }
}

/** The config context the workflows read. One device per (type, role) is enough: they share the context's scope. */
async function checkConfigContext(netbox: NetboxClient, devices: NetboxDevice[], add: Add): Promise<void> {
  const samples = new Map<string, NetboxDevice>();
  for (const d of devices)
    samples.set(`${d.device_type.slug}/${d.role.slug}`, samples.get(`${d.device_type.slug}/${d.role.slug}`) ?? d);
  for (const [group, d] of samples) {
    const full = await netbox.device(d.id);
    const context = full.config_context ?? {};
    const missing = REQUIRED_CONTEXT_KEYS.filter((k) => !(k in context));
    if (missing.length)
      add("fail", "config-context", `${group} (e.g. ${d.name ?? d.id}): config context lacks ${missing.join(", ")}`);
    else add("ok", "config-context", `${group}: ${REQUIRED_CONTEXT_KEYS.join(", ")} present`);
  }
}

/** The token may view MAC addresses (a warning otherwise: the agent works, MAC edits wait). */
async function checkMacPermission(netbox: NetboxClient, device: NetboxDevice, add: Add): Promise<void> {
  try {
    await netbox.list("dcim/mac-addresses", NetboxMacAddressSchema, { limit: 1, device_id: device.id });
    add("ok", "permissions", "the token may view MAC addresses (dcim.macaddress)");
  } catch (err) {
    if (!(err instanceof NetboxPermissionError)) throw err;
    add(
      "warn",
      "permissions",
      "the token may not view MAC addresses (dcim.macaddress): MAC edits will wait for the full resync",
    );
  }
}
