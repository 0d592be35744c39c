/**
 * What every representation embeds: custom fields, tags, `display`, and the brief ("nested")
 * representations of related objects, each serializer's Meta.brief_fields (SOURCES.md S2, S3,
 * S10 in fixtures/netbox/).
 */
import type {
  CableRecord,
  ClusterRecord,
  ClusterTypeRecord,
  DeviceRecord,
  DeviceRoleRecord,
  DeviceTypeRecord,
  InterfaceRecord,
  IpAddressRecord,
  LocationRecord,
  MacAddressRecord,
  ManufacturerRecord,
  RackRecord,
  SiteRecord,
  TagRecord,
} from "./store.ts";
import type { Json, View } from "./view.ts";

export function customFields(v: View, objectType: string, stored: Record<string, unknown>): Json {
  const out: Json = {};
  for (const name of v.data.customFields[objectType] ?? []) out[name] = stored[name] ?? null;
  return out;
}

export const nestedTags = (v: View, ids: number[]) =>
  ids
    .map((id) => v.tag(id))
    .filter((t): t is TagRecord => !!t)
    .map((t) => nestedTag(v, t));
export function nestedTag(v: View, t: TagRecord): Json {
  return {
    id: t.id,
    url: v.api(`extras/tags/${t.id}/`),
    display_url: v.ui(`extras/tags/${t.id}/`),
    display: t.name,
    name: t.name,
    slug: t.slug,
    color: t.color,
  };
}
export function briefSite(v: View, s: SiteRecord): Json {
  return {
    id: s.id,
    url: v.api(`dcim/sites/${s.id}/`),
    display: s.name,
    name: s.name,
    slug: s.slug,
    description: s.description,
  };
}
export function briefLocation(v: View, l: LocationRecord): Json {
  const rackCount = v.count("racksPerLocation", v.data.racks, (r) => r.location).get(l.id) ?? 0;
  return {
    id: l.id,
    url: v.api(`dcim/locations/${l.id}/`),
    display: l.name,
    name: l.name,
    slug: l.slug,
    description: l.description,
    rack_count: rackCount,
    _depth: 0,
  };
}
export function briefRack(v: View, r: RackRecord): Json {
  const deviceCount = v.count("devicesPerRack", v.data.devices, (d) => d.rack).get(r.id) ?? 0;
  return {
    id: r.id,
    url: v.api(`dcim/racks/${r.id}/`),
    display: r.name,
    name: r.name,
    description: r.description,
    device_count: deviceCount,
  };
}
export function briefManufacturer(v: View, m: ManufacturerRecord): Json {
  const n = v.count("typesPerManufacturer", v.data.deviceTypes, (t) => t.manufacturer).get(m.id) ?? 0;
  return {
    id: m.id,
    url: v.api(`dcim/manufacturers/${m.id}/`),
    display: m.name,
    name: m.name,
    slug: m.slug,
    description: m.description,
    devicetype_count: n,
  };
}
export function briefDeviceType(v: View, t: DeviceTypeRecord): Json {
  const m = v.manufacturer(t.manufacturer);
  const n = v.count("devicesPerType", v.data.devices, (d) => d.device_type).get(t.id) ?? 0;
  return {
    id: t.id,
    url: v.api(`dcim/device-types/${t.id}/`),
    display: t.model,
    manufacturer: m ? briefManufacturer(v, m) : null,
    model: t.model,
    slug: t.slug,
    description: t.description,
    device_count: n,
  };
}
export function briefRole(v: View, r: DeviceRoleRecord): Json {
  const n = v.count("devicesPerRole", v.data.devices, (d) => d.role).get(r.id) ?? 0;
  return {
    id: r.id,
    url: v.api(`dcim/device-roles/${r.id}/`),
    display: r.name,
    name: r.name,
    slug: r.slug,
    description: r.description,
    device_count: n,
    virtualmachine_count: 0,
    _depth: 0,
  };
}
export function briefClusterType(v: View, t: ClusterTypeRecord): Json {
  const n = v.count("clustersPerType", v.data.clusters, (c) => c.type).get(t.id) ?? 0;
  return {
    id: t.id,
    url: v.api(`virtualization/cluster-types/${t.id}/`),
    display: t.name,
    name: t.name,
    slug: t.slug,
    description: t.description,
    cluster_count: n,
  };
}
export function briefCluster(v: View, c: ClusterRecord): Json {
  return {
    id: c.id,
    url: v.api(`virtualization/clusters/${c.id}/`),
    display: c.name,
    name: c.name,
    description: c.description,
    virtualmachine_count: 0,
  };
}
export function briefDevice(v: View, d: DeviceRecord): Json {
  return {
    id: d.id,
    url: v.api(`dcim/devices/${d.id}/`),
    display: deviceDisplay(d),
    name: d.name,
    description: d.description,
  };
}
export function briefIp(v: View, ip: IpAddressRecord): Json {
  return {
    id: ip.id,
    url: v.api(`ipam/ip-addresses/${ip.id}/`),
    display: ip.address,
    family: family(ip.address),
    address: ip.address,
    description: ip.description,
  };
}
export function briefMac(v: View, m: MacAddressRecord): Json {
  return {
    id: m.id,
    url: v.api(`dcim/mac-addresses/${m.id}/`),
    display: m.mac_address,
    mac_address: m.mac_address,
    description: m.description,
  };
}
export function briefCable(v: View, c: CableRecord): Json {
  return {
    id: c.id,
    url: v.api(`dcim/cables/${c.id}/`),
    display: cableDisplay(c),
    label: c.label,
    description: c.description,
  };
}
export function briefInterface(v: View, i: InterfaceRecord): Json {
  const d = v.device(i.device);
  const cable = v.cableOf().get(i.id)?.cable;
  return {
    id: i.id,
    url: v.api(`dcim/interfaces/${i.id}/`),
    display: componentDisplay(i),
    device: d ? briefDevice(v, d) : null,
    name: i.name,
    description: i.description,
    cable: cable ? briefCable(v, cable) : null,
    _occupied: Boolean(cable) || i.mark_connected,
  };
}

// `display`: each model's __str__.
export const deviceDisplay = (d: DeviceRecord) => d.name ?? `Unnamed device (${d.id})`;
/** ComponentModel.__str__: the label joins the name once set (e.g. an InfiniBand GUID). */
export const componentDisplay = (i: InterfaceRecord) => (i.label ? `${i.name} (${i.label})` : i.name);
export const cableDisplay = (c: CableRecord) => c.label || `#${c.id}`;
export const family = (address: string) =>
  address.includes(":") ? { value: 6, label: "IPv6" } : { value: 4, label: "IPv4" };
