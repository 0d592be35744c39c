/**
 * Reading a site's devices from NetBox, with everything their reflection items are made of:
 * interfaces (whose `link_peers` and `connected_endpoints` give the cable peers, through patch
 * panels too, so cables are not read; and whose `mac_addresses` list the MACs NetBox 4.2+ keeps
 * apart, so those are not read either), device types and management IPs. The mapping to items
 * is pure (./mapping.ts).
 */
import type { NetboxClient, NetboxDevice, NetboxInterface } from "@fm/clients";
import type { MapContext } from "./mapping.ts";

export interface NetboxScope {
  siteId: number;
  /** NetBox's name of the site (the hub names the site with it). */
  siteName: string;
  /** The NetBox clusters whose devices at the site are ingested. */
  clusterIds: number[];
}

export interface SiteRead {
  /** The clusters' devices at the site. */
  devices: NetboxDevice[];
  /** Their interfaces, by device id. */
  interfaces: Map<number, NetboxInterface[]>;
  /** What the mapping needs besides the role mapping. */
  context: Omit<MapContext, "roles">;
}

/** One full read. */
export async function readSite(netbox: NetboxClient, scope: NetboxScope): Promise<SiteRead> {
  const devices = await netbox.devices({
    cluster_id: scope.clusterIds,
    site_id: scope.siteId,
    exclude: "config_context",
  });
  const deviceIds = new Set(devices.map((d) => d.id));
  const all = devices.length ? await netbox.interfaces({ site_id: scope.siteId }) : [];
  const mine = all.filter((i) => deviceIds.has(i.device.id));
  const interfaces = new Map<number, NetboxInterface[]>();
  for (const i of mine) interfaces.set(i.device.id, [...(interfaces.get(i.device.id) ?? []), i]);
  const [deviceTypes, mgmtIps] = await Promise.all([netbox.deviceTypes(), mgmtIpsOf(netbox, devices, interfaces)]);
  return {
    devices,
    interfaces,
    context: { deviceTypes: new Map(deviceTypes.map((t) => [t.id, t])), mgmtIps },
  };
}

/** BMC addresses for devices without an OOB IP: the IP on their management-only interface. */
async function mgmtIpsOf(
  netbox: NetboxClient,
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
