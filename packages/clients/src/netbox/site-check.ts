/**
 * Pre-rollout validation of a site's NetBox data (rollout guide, "Prepare NetBox and Config
 * Context"): what the netbox agent will ingest must be there and ready before the satellite
 * is enabled. Pure checks over the NetBox client, shared by `npm run netbox:check` and
 * `fleetctl netbox check`, which print them and set the exit code.
 */
import { z } from "zod";
import type { DeviceClass } from "@fm/domain";
import type { NetboxClient } from "./netbox-client.ts";
import type { NetboxDevice } from "./schemas.ts";
import { NetboxPermissionError } from "./errors.ts";

/** Role slug → device class, as the netbox agent's NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING. */
type RoleClassMapping = Record<string, DeviceClass>;

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
  const status = await netbox.status();
  add("ok", "netbox", `NetBox ${status["netbox-version"]} answers and accepts the token`);
  const denied = await checkPermissions(netbox, add);
  if (SCOPE_READS.some((r) => denied.has(r))) return out;
  const devices = await checkScope(netbox, opts, add);
  if (!devices) return out;
  checkStatuses(devices, add);
  checkRoles(devices, opts.mapping, add);
  checkCustomFields(devices[0]!, add);
  await checkConfigContext(netbox, devices, add);
  return out;
}

/**
 * The reads the netbox agent and the workflows make, by model permission (rollout guide,
 * "Required NetBox Object Permissions", plus the change log the agent polls). `warn`: the agent
 * works without it, degraded as `without` says.
 */
export const READ_PERMISSIONS: ReadonlyArray<{
  permission: string;
  path: string;
  severity: "fail" | "warn";
  without: string;
}> = [
  { permission: "dcim.view_site", path: "dcim/sites", severity: "fail", without: "the agent cannot find its site" },
  { permission: "dcim.view_device", path: "dcim/devices", severity: "fail", without: "no device is ingested" },
  { permission: "dcim.view_interface", path: "dcim/interfaces", severity: "fail", without: "no interface is ingested" },
  { permission: "dcim.view_devicetype", path: "dcim/device-types", severity: "fail", without: "the full read fails" },
  {
    permission: "virtualization.view_cluster",
    path: "virtualization/clusters",
    severity: "fail",
    without: "the agent cannot find its cluster",
  },
  {
    permission: "ipam.view_ipaddress",
    path: "ipam/ip-addresses",
    severity: "fail",
    without: "BMC addresses on management interfaces are not read",
  },
  {
    permission: "extras.view_configcontext",
    path: "extras/config-contexts",
    severity: "fail",
    without: "the workflows cannot read the hardware settings they enforce",
  },
  { permission: "extras.view_tag", path: "extras/tags", severity: "fail", without: "enrolment cannot attach tags" },
  {
    permission: "core.view_objectchange",
    path: "core/object-changes",
    severity: "fail",
    without: "the agent cannot poll the change log: NetBox edits wait for the full resync (NETBOX_RESYNC_INTERVAL_S)",
  },
  {
    permission: "dcim.view_macaddress",
    path: "dcim/mac-addresses",
    severity: "warn",
    without: "MAC address edits wait for the full resync",
  },
];
/** Without these the scope (site, cluster, devices) cannot be checked at all. */
const SCOPE_READS = ["dcim.view_site", "virtualization.view_cluster", "dcim.view_device"];

/** One request per permission (the first object of each list), each missing one reported by name. */
async function checkPermissions(netbox: NetboxClient, add: Add): Promise<Set<string>> {
  const denied = new Set<string>();
  await Promise.all(
    READ_PERMISSIONS.map(async (r) => {
      try {
        await netbox.firstPage(r.path, z.unknown());
      } catch (err) {
        if (!(err instanceof NetboxPermissionError)) throw err;
        denied.add(r.permission);
      }
    }),
  );
  for (const r of READ_PERMISSIONS)
    if (denied.has(r.permission)) add(r.severity, "permissions", `the token lacks ${r.permission}: ${r.without}`);
  const granted = READ_PERMISSIONS.filter((r) => !denied.has(r.permission)).map((r) => r.permission);
  if (granted.length) add("ok", "permissions", `the token has ${granted.join(", ")}`);
  return denied;
}

/**
 * The `platform_class` custom field the workflows write must be defined on devices: NetBox lists
 * every defined custom field in a device (null when unset), and since 4.4.10 it drops an
 * undefined one from a write without an error.
 */
function checkCustomFields(device: NetboxDevice, add: Add): void {
  if ("platform_class" in device.custom_fields)
    add("ok", "custom-fields", "custom field 'platform_class' is defined on dcim.device");
  else
    add(
      "fail",
      "custom-fields",
      "custom field 'platform_class' is not defined on dcim.device: create it (Customization → Custom Fields) or enrolment cannot record a device's platform class",
    );
}

/** NetBox answers, the site and cluster exist, and the cluster has devices at the site (else undefined). */
async function checkScope(
  netbox: NetboxClient,
  opts: { site: string; cluster: string },
  add: Add,
): Promise<NetboxDevice[] | undefined> {
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

/** The findings as the check commands print them, one a line, and a closing verdict. */
export function formatFindings(findings: Finding[]): string {
  const failed = findings.filter((f) => f.severity === "fail").length;
  const lines = findings.map((f) => `${f.severity.toUpperCase().padEnd(4)} ${f.check.padEnd(14)} ${f.message}`);
  lines.push(
    "",
    failed ? `${failed} problem(s): fix them in NetBox before rollout.` : "NetBox is ready for this site.",
  );
  return `${lines.join("\n")}\n`;
}
