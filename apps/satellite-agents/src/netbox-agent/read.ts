/**
 * Reading a site's devices from NetBox, with everything their reflection items are made of:
 * interfaces, device types, cable peers, MAC addresses kept apart from interfaces (NetBox 4.2+)
 * and management IPs. The mapping to items is pure (./mapping.ts).
 */
import { NetboxPermissionError, type NetboxClient, type NetboxDevice, type NetboxInterface } from "@fm/clients";
import type { MapContext, Peer } from "./mapping.ts";

export interface NetboxScope {
  siteId: number;
  clusterId: number;
}

export interface SiteRead {
  /** The cluster's devices at the site. */
  devices: NetboxDevice[];
  /** Their interfaces, by device id. */
  interfaces: Map<number, NetboxInterface[]>;
  /** What the mapping needs besides the role mapping. */
  context: Omit<MapContext, "roles">;
}

/**
 * One full read. A token that may not view MAC addresses is reported through
 * `onMacPermissionDenied`, and interfaces without a primary MAC then go without one.
 */
export async function readSite(
  netbox: NetboxClient,
  scope: NetboxScope,
  onMacPermissionDenied: (err: NetboxPermissionError) => void,
): Promise<SiteRead> {
  const devices = await netbox.devices({
    cluster_id: scope.clusterId,
    site_id: scope.siteId,
    exclude: "config_context",
  });
  const deviceIds = new Set(devices.map((d) => d.id));
  const all = devices.length ? await netbox.interfaces({ site_id: scope.siteId }) : [];
  const mine = all.filter((i) => deviceIds.has(i.device.id));
  const interfaces = new Map<number, NetboxInterface[]>();
  for (const i of mine) interfaces.set(i.device.id, [...(interfaces.get(i.device.id) ?? []), i]);
  const [deviceTypes, cablePeers, macs, mgmtIps] = await Promise.all([
    netbox.deviceTypes(),
    cablePeersOf(netbox, scope.siteId),
    macsOf(netbox, mine).catch((err: unknown) => {
      if (!(err instanceof NetboxPermissionError)) throw err;
      onMacPermissionDenied(err);
      return new Map<number, string>();
    }),
    mgmtIpsOf(netbox, devices, interfaces),
  ]);
  return {
    devices,
    interfaces,
    context: { deviceTypes: new Map(deviceTypes.map((t) => [t.id, t])), macs, cablePeers, mgmtIps },
  };
}

/** MACs of interfaces without a primary MAC, from dcim.macaddress. */
async function macsOf(netbox: NetboxClient, ifaces: NetboxInterface[]): Promise<Map<number, string>> {
  const missing = ifaces.filter((i) => !i.primary_mac_address && !i.mac_address).map((i) => i.id);
  const out = new Map<number, string>();
  for (let k = 0; k < missing.length; k += 100) {
    for (const m of await netbox.macAddresses({ interface_id: missing.slice(k, k + 100) }))
      if (m.assigned_object_id !== null && !out.has(m.assigned_object_id)) out.set(m.assigned_object_id, m.mac_address);
  }
  return out;
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
