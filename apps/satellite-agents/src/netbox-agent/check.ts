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

export async function checkNetboxSite(
  netbox: NetboxClient,
  opts: { site: string; cluster: string; mapping: RoleClassMapping },
): Promise<Finding[]> {
  const out: Finding[] = [];
  const add = (severity: Severity, check: string, message: string) => out.push({ severity, check, message });

  const status = await netbox.status();
  add("ok", "netbox", `NetBox ${String(status["netbox-version"] ?? "?")} answers and accepts the token`);

  const sites = await netbox.sites({ slug: opts.site });
  if (sites.length !== 1) {
    add("fail", "site", `no NetBox site with slug '${opts.site}'`);
    return out;
  }
  const site = sites[0]!;
  add("ok", "site", `site '${site.slug}' (#${site.id}) exists`);

  const clusters = /^\d+$/.test(opts.cluster)
    ? await netbox.clusters({ id: Number(opts.cluster) })
    : await netbox.clusters({ name: opts.cluster });
  if (clusters.length !== 1) {
    add("fail", "cluster", `no NetBox cluster '${opts.cluster}': create it under Virtualization → Clusters`);
    return out;
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
    return out;
  }
  add("ok", "devices", `${devices.length} device(s) of site '${site.slug}' in cluster '${cluster.name}'`);

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

  const roles = [...new Set(devices.map((d) => d.role.slug))].sort();
  for (const r of roles) {
    if (opts.mapping[r]) add("ok", "roles", `role '${r}' → ${opts.mapping[r]}`);
    else
      add(
        "fail",
        "roles",
        `role '${r}' has no device class in NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING (its devices would be OTHER, served by no Ironic)`,
      );
  }

  // Config context: one device per (type, role) is enough, they share the context's scope.
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

  try {
    await netbox.list("dcim/mac-addresses", NetboxMacAddressSchema, { limit: 1, device_id: devices[0]!.id });
    add("ok", "permissions", "the token may view MAC addresses (dcim.macaddress)");
  } catch (err) {
    if (!(err instanceof NetboxPermissionError)) throw err;
    add(
      "warn",
      "permissions",
      "the token may not view MAC addresses (dcim.macaddress): MAC edits will wait for the full resync",
    );
  }
  return out;
}
