/**
 * What every representation embeds: custom fields, tags, `display`, and the brief ("nested")
 * representations of related objects, each serializer's Meta.brief_fields at v4.5.0 (SOURCES.md
 * S2, S3 in fixtures/netbox/).
 *
 * Counts in brief fields: a nested object is not annotated (only the list's own queryset is), so
 * a `RelatedObjectCountField` or an `IntegerField(read_only=True)` without a default raises
 * AttributeError on read and DRF skips the field (Field.get_attribute, `not required` ->
 * SkipField): a nested device type, rack, cluster or cluster type carries no count. An
 * `IntegerField(read_only=True, default=0)` renders its default: a nested role says
 * `device_count: 0`, a nested location `rack_count: 0`, whatever the real numbers (S12).
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
  NetboxData,
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
  return {
    id: l.id,
    url: v.api(`dcim/locations/${l.id}/`),
    display: l.name,
    name: l.name,
    slug: l.slug,
    description: l.description,
    rack_count: 0, // IntegerField(default=0), not annotated when nested
    _depth: 0,
  };
}
export function briefRack(v: View, r: RackRecord): Json {
  return { id: r.id, url: v.api(`dcim/racks/${r.id}/`), display: r.name, name: r.name, description: r.description };
}
export function briefManufacturer(v: View, m: ManufacturerRecord): Json {
  return {
    id: m.id,
    url: v.api(`dcim/manufacturers/${m.id}/`),
    display: m.name,
    name: m.name,
    slug: m.slug,
    description: m.description,
  };
}
export function briefDeviceType(v: View, t: DeviceTypeRecord): Json {
  const m = v.manufacturer(t.manufacturer);
  return {
    id: t.id,
    url: v.api(`dcim/device-types/${t.id}/`),
    display: t.model,
    manufacturer: m ? briefManufacturer(v, m) : null,
    model: t.model,
    slug: t.slug,
    description: t.description,
  };
}
export function briefRole(v: View, r: DeviceRoleRecord): Json {
  return {
    id: r.id,
    url: v.api(`dcim/device-roles/${r.id}/`),
    display: r.name,
    name: r.name,
    slug: r.slug,
    description: r.description,
    // IntegerField(read_only=True, default=0): the default, not the count, when nested.
    device_count: 0,
    virtualmachine_count: 0,
    _depth: 0,
  };
}
export function briefClusterType(v: View, t: ClusterTypeRecord): Json {
  return {
    id: t.id,
    url: v.api(`virtualization/cluster-types/${t.id}/`),
    display: t.name,
    name: t.name,
    slug: t.slug,
    description: t.description,
  };
}
export function briefCluster(v: View, c: ClusterRecord): Json {
  return {
    id: c.id,
    url: v.api(`virtualization/clusters/${c.id}/`),
    display: c.name,
    name: c.name,
    description: c.description,
  };
}
export function briefDevice(v: View, d: DeviceRecord): Json {
  return {
    id: d.id,
    url: v.api(`dcim/devices/${d.id}/`),
    display: deviceDisplay(v.data, d),
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

// `display`: each model's __str__ (S12).
/** Device.__str__: `name (asset_tag)`, `name`, else `Manufacturer Model (asset_tag)` or `Manufacturer Model (pk)`. */
export function deviceDisplay(data: NetboxData, d: DeviceRecord): string {
  if (d.name) return d.asset_tag ? `${d.name} (${d.asset_tag})` : d.name;
  const t = data.deviceTypes.find((x) => x.id === d.device_type);
  const m = t && data.manufacturers.find((x) => x.id === t.manufacturer);
  return `${m?.name ?? ""} ${t?.model ?? ""} (${d.asset_tag ?? d.id})`;
}
/** ComponentModel.__str__: the label joins the name once set (e.g. an InfiniBand GUID). */
export const componentDisplay = (i: InterfaceRecord) => (i.label ? `${i.name} (${i.label})` : i.name);
export const cableDisplay = (c: CableRecord) => c.label || `#${c.id}`;
export const family = (address: string) =>
  address.includes(":") ? { value: 6, label: "IPv6" } : { value: 4, label: "IPv4" };
