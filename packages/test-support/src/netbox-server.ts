/**
 * A NetBox 4.5 stand-in for tests: NetBox (Django, PostgreSQL, Redis) cannot run on this machine,
 * so this node:http server answers the part of NetBox's REST API the fleet manager uses, from an
 * in-memory store, with NetBox's own response shapes and semantics. test/netbox-server.test.ts
 * holds every shape against the fixtures in packages/test-support/fixtures/netbox/ (see SOURCES.md there), so
 * this server cannot drift into an invented API.
 *
 * What it follows (NetBox 4.5.0 unless noted; sources in packages/test-support/fixtures/netbox/SOURCES.md):
 * - Auth: `Authorization: Token <40 hex>` (v1) and `Authorization: Bearer nbt_<key>.<secret>`
 *   (v2, new in 4.5). Failures are 403, not 401: DRF derives the WWW-Authenticate header from
 *   the *first* authentication class, which in NetBox is SessionAuthentication (it has none),
 *   so NotAuthenticated and AuthenticationFailed both render as 403 `{"detail": ...}`.
 * - A token whose user lacks the view/change permission of a model: 403 "You do not have
 *   permission to perform this action." (DRF PermissionDenied), on list and detail alike.
 * - Pagination: LimitOffsetPagination, PAGINATE_COUNT 50, MAX_PAGE_SIZE 1000 (limit=0 and
 *   limit>1000 both give 1000, a bad limit gives 50). `next`/`previous` are absolute URLs built
 *   from the request's Host, with the query re-encoded in sorted key order as DRF's
 *   replace_query_param does; `previous` drops `offset` when it would be 0.
 * - Filters: repeated parameters are ORed. ModelMultipleChoice filters (site_id, cluster_id,
 *   role, ...) reject a malformed or unknown value with 400 `{"<param>": ["<Django message>"]}`;
 *   number filters reject non-numbers ("Enter a number."); unknown parameters are ignored, as
 *   django-filter does (NetBox has no site_id filter on MAC or IP addresses, so it is ignored
 *   there, which is a trap for clients).
 * - Writes bump `last_updated` and record a core.objectchange (NetBox >= 4.1 serves them at
 *   /api/core/object-changes/; prechange/postchange data are the flat serialize_object() form:
 *   foreign keys as ids, tags as sorted names).
 *
 * Not NetBox: only the PATCH fields the fleet manager writes are implemented (others answer
 * 400 naming the limitation), there is no POST/PUT/DELETE and no `brief`/`fields`/`exclude`
 * modes. A PATCH that changes nothing bumps last_updated but records no change; that NetBox
 * skips change records without changes is an assumption (the client never sends such a PATCH).
 * `publicUrl` makes the links name another origin, as a NetBox behind a proxy does.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export const NETBOX_VERSION = "4.5.0";
const API_VERSION = "4.5";
const PAGINATE_COUNT = 50;
const MAX_PAGE_SIZE = 1000;

// ---------------------------------------------------------------------------------------------
// The store: one record type per model, holding what NetBox stores (foreign keys as ids).
// Counts, nested objects, URLs and `display` are derived when rendering.
// ---------------------------------------------------------------------------------------------

type Timestamps = { created: string; last_updated: string };
type Taggable = { tags: number[]; custom_fields: Record<string, unknown> };

export interface SiteRecord extends Timestamps, Taggable {
  id: number;
  name: string;
  slug: string;
  status: string;
  facility: string;
  time_zone: string | null;
  description: string;
  physical_address: string;
  latitude: number | null;
  longitude: number | null;
}
export interface LocationRecord extends Timestamps, Taggable {
  id: number;
  name: string;
  slug: string;
  site: number;
  status: string;
  description: string;
}
export interface RackRecord extends Timestamps, Taggable {
  id: number;
  name: string;
  site: number;
  location: number | null;
  status: string;
  u_height: number;
  description: string;
}
export interface ManufacturerRecord extends Timestamps {
  id: number;
  name: string;
  slug: string;
  description: string;
}
export interface DeviceTypeRecord extends Timestamps, Taggable {
  id: number;
  manufacturer: number;
  model: string;
  slug: string;
  part_number: string;
  u_height: number;
  is_full_depth: boolean;
  airflow: string | null;
  description: string;
  interface_template_count: number;
}
export interface DeviceRoleRecord extends Timestamps, Taggable {
  id: number;
  name: string;
  slug: string;
  color: string;
  vm_role: boolean;
  description: string;
}
export interface ClusterTypeRecord extends Timestamps {
  id: number;
  name: string;
  slug: string;
  description: string;
}
export interface ClusterRecord extends Timestamps, Taggable {
  id: number;
  name: string;
  type: number;
  status: string;
  /** Scope: NetBox >= 4.2 scopes clusters to a region/site group/site/location; here always a site. */
  site: number | null;
  description: string;
}
export interface TagRecord extends Timestamps {
  id: number;
  name: string;
  slug: string;
  color: string;
  description: string;
  weight: number;
}
export interface DeviceRecord extends Timestamps, Taggable {
  id: number;
  name: string | null;
  device_type: number;
  role: number;
  serial: string;
  asset_tag: string | null;
  site: number;
  location: number | null;
  rack: number | null;
  position: number | null;
  face: string | null;
  status: string;
  airflow: string | null;
  primary_ip4: number | null;
  oob_ip: number | null;
  cluster: number | null;
  description: string;
  comments: string;
  local_context_data: Record<string, unknown> | null;
}
export interface InterfaceRecord extends Timestamps, Taggable {
  id: number;
  device: number;
  name: string;
  label: string;
  type: string;
  enabled: boolean;
  mtu: number | null;
  speed: number | null;
  mgmt_only: boolean;
  description: string;
  primary_mac_address: number | null;
  mark_connected: boolean;
}
export interface CableRecord extends Timestamps, Taggable {
  id: number;
  type: string | null;
  /** Interface ids on the A and B ends. */
  a: number[];
  b: number[];
  status: string;
  label: string;
  color: string;
  length: number | null;
  length_unit: string | null;
  description: string;
}
export interface MacAddressRecord extends Timestamps, Taggable {
  id: number;
  mac_address: string;
  /** Always an interface here (NetBox also allows virtualization.vminterface). */
  interface: number | null;
  description: string;
  comments: string;
}
export interface IpAddressRecord extends Timestamps, Taggable {
  id: number;
  address: string;
  status: string;
  interface: number | null;
  dns_name: string;
  description: string;
  comments: string;
}
export interface ConfigContextRecord extends Timestamps {
  id: number;
  name: string;
  weight: number;
  description: string;
  is_active: boolean;
  /** Assignment criteria; an empty list matches every device. */
  sites: number[];
  roles: number[];
  device_types: number[];
  clusters: number[];
  data: Record<string, unknown>;
}
export interface ObjectChangeRecord {
  id: number;
  time: string;
  user_name: string;
  request_id: string;
  action: "create" | "update" | "delete";
  changed_object_type: string;
  changed_object_id: number;
  object_repr: string;
  message: string;
  prechange_data: Record<string, unknown> | null;
  postchange_data: Record<string, unknown> | null;
}

export interface NetboxData {
  sites: SiteRecord[];
  locations: LocationRecord[];
  racks: RackRecord[];
  manufacturers: ManufacturerRecord[];
  deviceTypes: DeviceTypeRecord[];
  deviceRoles: DeviceRoleRecord[];
  clusterTypes: ClusterTypeRecord[];
  clusters: ClusterRecord[];
  tags: TagRecord[];
  devices: DeviceRecord[];
  interfaces: InterfaceRecord[];
  cables: CableRecord[];
  macAddresses: MacAddressRecord[];
  ipAddresses: IpAddressRecord[];
  configContexts: ConfigContextRecord[];
  objectChanges: ObjectChangeRecord[];
  /** Custom fields defined per object type ("dcim.device": ["platform_class"]); NetBox renders each, null when unset. */
  customFields: Record<string, string[]>;
  /** The user the token belongs to (object changes name it). */
  user: { id: number; username: string };
}

export function emptyNetboxData(): NetboxData {
  return {
    sites: [],
    locations: [],
    racks: [],
    manufacturers: [],
    deviceTypes: [],
    deviceRoles: [],
    clusterTypes: [],
    clusters: [],
    tags: [],
    devices: [],
    interfaces: [],
    cables: [],
    macAddresses: [],
    ipAddresses: [],
    configContexts: [],
    objectChanges: [],
    customFields: {},
    user: { id: 1, username: "fleet-agent" },
  };
}

// ---------------------------------------------------------------------------------------------
// Choices ({value, label} as NetBox's ChoiceField renders them; a blank value renders as null).
// ---------------------------------------------------------------------------------------------

const DEVICE_STATUS: Record<string, string> = {
  offline: "Offline",
  active: "Active",
  planned: "Planned",
  staged: "Staged",
  failed: "Failed",
  inventory: "Inventory",
  decommissioning: "Decommissioning",
};
const SITE_STATUS: Record<string, string> = {
  planned: "Planned",
  staging: "Staging",
  active: "Active",
  decommissioning: "Decommissioning",
  retired: "Retired",
};
const RACK_STATUS: Record<string, string> = {
  reserved: "Reserved",
  available: "Available",
  planned: "Planned",
  active: "Active",
  deprecated: "Deprecated",
};
const CLUSTER_STATUS: Record<string, string> = {
  planned: "Planned",
  staging: "Staging",
  active: "Active",
  decommissioning: "Decommissioning",
  offline: "Offline",
};
const IP_STATUS: Record<string, string> = {
  active: "Active",
  reserved: "Reserved",
  deprecated: "Deprecated",
  dhcp: "DHCP",
  slaac: "SLAAC",
};
const CABLE_STATUS: Record<string, string> = {
  connected: "Connected",
  planned: "Planned",
  decommissioning: "Decommissioning",
};
const CABLE_TYPE: Record<string, string> = {
  cat6: "CAT6",
  "mmf-om4": "Multimode Fiber (OM4)",
  smf: "Singlemode Fiber",
  "dac-passive": "Direct Attach Copper (Passive)",
};
const LENGTH_UNIT: Record<string, string> = { m: "Meters", cm: "Centimeters", ft: "Feet", in: "Inches" };
const FACE: Record<string, string> = { front: "Front", rear: "Rear" };
const AIRFLOW: Record<string, string> = {
  "front-to-rear": "Front to rear",
  "rear-to-front": "Rear to front",
  passive: "Passive",
};
const ACTION: Record<string, string> = { create: "Created", update: "Updated", delete: "Deleted" };
export const INTERFACE_TYPES: Record<string, string> = {
  "1000base-t": "1000BASE-T (1GE)",
  "25gbase-x-sfp28": "SFP28 (25GE)",
  "100gbase-x-qsfp28": "QSFP28 (100GE)",
  "200gbase-x-qsfp56": "QSFP56 (200GE)",
  "400gbase-x-osfp": "OSFP (400GE)",
  "800gbase-x-osfp": "OSFP (800GE)",
  "infiniband-hdr": "HDR (50 Gbps)",
  "infiniband-ndr": "NDR (100 Gbps)",
  "infiniband-xdr": "XDR (250 Gbps)",
};

function choice(labels: Record<string, string>, value: string | null): { value: string; label: string } | null {
  if (value === null || value === "") return null;
  return { value, label: labels[value] ?? "" };
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

/** Per-request view of the store: absolute URL base plus lazily built reverse indexes. */
class View {
  private memo = new Map<string, unknown>();
  constructor(
    readonly data: NetboxData,
    readonly base: string,
  ) {}

  api(path: string): string {
    return `${this.base}/api/${path}`;
  }
  ui(path: string): string {
    return `${this.base}/${path}`;
  }

  private cached<T>(key: string, build: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, build());
    return this.memo.get(key) as T;
  }
  byId<T extends { id: number }>(name: keyof NetboxData, rows: T[]): Map<number, T> {
    return this.cached(`id:${String(name)}`, () => new Map(rows.map((r) => [r.id, r])));
  }
  count<T>(key: string, rows: T[], of: (row: T) => number | null | undefined): Map<number, number> {
    return this.cached(`count:${key}`, () => {
      const m = new Map<number, number>();
      for (const r of rows) {
        const k = of(r);
        if (k != null) m.set(k, (m.get(k) ?? 0) + 1);
      }
      return m;
    });
  }
  /** interface id -> the cable it is on, and which end. */
  cableOf(): Map<number, { cable: CableRecord; end: "A" | "B" }> {
    return this.cached("cableOf", () => {
      const m = new Map<number, { cable: CableRecord; end: "A" | "B" }>();
      for (const c of this.data.cables) {
        for (const i of c.a) m.set(i, { cable: c, end: "A" });
        for (const i of c.b) m.set(i, { cable: c, end: "B" });
      }
      return m;
    });
  }
  macsOf(): Map<number, MacAddressRecord[]> {
    return this.cached("macsOf", () => group(this.data.macAddresses, (m) => m.interface));
  }
  ipsOf(): Map<number, IpAddressRecord[]> {
    return this.cached("ipsOf", () => group(this.data.ipAddresses, (m) => m.interface));
  }
  /** tag id -> how many objects carry it (Tag.tagged_items). */
  tagged(): Map<number, number> {
    return this.cached("tagged", () => {
      const m = new Map<number, number>();
      const d = this.data;
      for (const rows of [
        d.sites,
        d.locations,
        d.racks,
        d.deviceTypes,
        d.deviceRoles,
        d.clusters,
        d.devices,
        d.interfaces,
        d.cables,
        d.macAddresses,
        d.ipAddresses,
      ]) {
        for (const row of rows as Array<{ tags: number[] }>) for (const t of row.tags) m.set(t, (m.get(t) ?? 0) + 1);
      }
      return m;
    });
  }
  site(id: number) {
    return this.byId("sites", this.data.sites).get(id);
  }
  location(id: number) {
    return this.byId("locations", this.data.locations).get(id);
  }
  rack(id: number) {
    return this.byId("racks", this.data.racks).get(id);
  }
  manufacturer(id: number) {
    return this.byId("manufacturers", this.data.manufacturers).get(id);
  }
  deviceType(id: number) {
    return this.byId("deviceTypes", this.data.deviceTypes).get(id);
  }
  role(id: number) {
    return this.byId("deviceRoles", this.data.deviceRoles).get(id);
  }
  clusterType(id: number) {
    return this.byId("clusterTypes", this.data.clusterTypes).get(id);
  }
  cluster(id: number) {
    return this.byId("clusters", this.data.clusters).get(id);
  }
  tag(id: number) {
    return this.byId("tags", this.data.tags).get(id);
  }
  device(id: number) {
    return this.byId("devices", this.data.devices).get(id);
  }
  iface(id: number) {
    return this.byId("interfaces", this.data.interfaces).get(id);
  }
  mac(id: number) {
    return this.byId("macAddresses", this.data.macAddresses).get(id);
  }
  ip(id: number) {
    return this.byId("ipAddresses", this.data.ipAddresses).get(id);
  }
}

function group<T>(rows: T[], key: (row: T) => number | null): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const r of rows) {
    const k = key(r);
    if (k == null) continue;
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}

function customFields(v: View, objectType: string, stored: Record<string, unknown>): Json {
  const out: Json = {};
  for (const name of v.data.customFields[objectType] ?? []) out[name] = stored[name] ?? null;
  return out;
}

const nestedTags = (v: View, ids: number[]) =>
  ids
    .map((id) => v.tag(id))
    .filter((t): t is TagRecord => !!t)
    .map((t) => nestedTag(v, t));

// Brief ("nested") representations: each serializer's Meta.brief_fields.

function nestedTag(v: View, t: TagRecord): Json {
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
function briefSite(v: View, s: SiteRecord): Json {
  return {
    id: s.id,
    url: v.api(`dcim/sites/${s.id}/`),
    display: s.name,
    name: s.name,
    slug: s.slug,
    description: s.description,
  };
}
function briefLocation(v: View, l: LocationRecord): Json {
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
function briefRack(v: View, r: RackRecord): Json {
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
function briefManufacturer(v: View, m: ManufacturerRecord): Json {
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
function briefDeviceType(v: View, t: DeviceTypeRecord): Json {
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
function briefRole(v: View, r: DeviceRoleRecord): Json {
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
function briefClusterType(v: View, t: ClusterTypeRecord): Json {
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
function briefCluster(v: View, c: ClusterRecord): Json {
  return {
    id: c.id,
    url: v.api(`virtualization/clusters/${c.id}/`),
    display: c.name,
    name: c.name,
    description: c.description,
    virtualmachine_count: 0,
  };
}
function briefDevice(v: View, d: DeviceRecord): Json {
  return {
    id: d.id,
    url: v.api(`dcim/devices/${d.id}/`),
    display: deviceDisplay(d),
    name: d.name,
    description: d.description,
  };
}
function briefIp(v: View, ip: IpAddressRecord): Json {
  return {
    id: ip.id,
    url: v.api(`ipam/ip-addresses/${ip.id}/`),
    display: ip.address,
    family: family(ip.address),
    address: ip.address,
    description: ip.description,
  };
}
function briefMac(v: View, m: MacAddressRecord): Json {
  return {
    id: m.id,
    url: v.api(`dcim/mac-addresses/${m.id}/`),
    display: m.mac_address,
    mac_address: m.mac_address,
    description: m.description,
  };
}
function briefCable(v: View, c: CableRecord): Json {
  return {
    id: c.id,
    url: v.api(`dcim/cables/${c.id}/`),
    display: cableDisplay(c),
    label: c.label,
    description: c.description,
  };
}
function briefInterface(v: View, i: InterfaceRecord): Json {
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

const deviceDisplay = (d: DeviceRecord) => d.name ?? `Unnamed device (${d.id})`;
/** ComponentModel.__str__: the label joins the name once set (e.g. an InfiniBand GUID). */
const componentDisplay = (i: InterfaceRecord) => (i.label ? `${i.name} (${i.label})` : i.name);
const cableDisplay = (c: CableRecord) => c.label || `#${c.id}`;
const family = (address: string) => (address.includes(":") ? { value: 6, label: "IPv6" } : { value: 4, label: "IPv4" });

function renderSite(v: View, s: SiteRecord): Json {
  return {
    id: s.id,
    url: v.api(`dcim/sites/${s.id}/`),
    display_url: v.ui(`dcim/sites/${s.id}/`),
    display: s.name,
    name: s.name,
    slug: s.slug,
    status: choice(SITE_STATUS, s.status),
    region: null,
    group: null,
    tenant: null,
    facility: s.facility,
    time_zone: s.time_zone,
    description: s.description,
    physical_address: s.physical_address,
    shipping_address: "",
    latitude: s.latitude,
    longitude: s.longitude,
    owner: null,
    comments: "",
    asns: [],
    tags: nestedTags(v, s.tags),
    custom_fields: customFields(v, "dcim.site", s.custom_fields),
    created: s.created,
    last_updated: s.last_updated,
    circuit_count: 0,
    device_count: v.count("devicesPerSite", v.data.devices, (d) => d.site).get(s.id) ?? 0,
    prefix_count: 0,
    rack_count: v.count("racksPerSite", v.data.racks, (r) => r.site).get(s.id) ?? 0,
    virtualmachine_count: 0,
    vlan_count: 0,
  };
}

function renderLocation(v: View, l: LocationRecord): Json {
  const site = v.site(l.site);
  return {
    id: l.id,
    url: v.api(`dcim/locations/${l.id}/`),
    display_url: v.ui(`dcim/locations/${l.id}/`),
    display: l.name,
    name: l.name,
    slug: l.slug,
    site: site ? briefSite(v, site) : null,
    parent: null,
    status: choice(SITE_STATUS, l.status),
    tenant: null,
    facility: "",
    description: l.description,
    tags: nestedTags(v, l.tags),
    custom_fields: customFields(v, "dcim.location", l.custom_fields),
    created: l.created,
    last_updated: l.last_updated,
    rack_count: v.count("racksPerLocation", v.data.racks, (r) => r.location).get(l.id) ?? 0,
    device_count: v.count("devicesPerLocation", v.data.devices, (d) => d.location).get(l.id) ?? 0,
    prefix_count: 0,
    owner: null,
    comments: "",
    _depth: 0,
  };
}

function renderRack(v: View, r: RackRecord): Json {
  const site = v.site(r.site);
  const location = r.location != null ? v.location(r.location) : undefined;
  return {
    id: r.id,
    url: v.api(`dcim/racks/${r.id}/`),
    display_url: v.ui(`dcim/racks/${r.id}/`),
    display: r.name,
    name: r.name,
    facility_id: null,
    site: site ? briefSite(v, site) : null,
    location: location ? briefLocation(v, location) : null,
    tenant: null,
    status: choice(RACK_STATUS, r.status),
    role: null,
    serial: "",
    asset_tag: null,
    rack_type: null,
    form_factor: { value: "4-post-cabinet", label: "4-post cabinet" },
    width: { value: 19, label: "19 inches" },
    u_height: r.u_height,
    starting_unit: 1,
    weight: null,
    max_weight: null,
    weight_unit: null,
    desc_units: false,
    outer_width: null,
    outer_height: null,
    outer_depth: null,
    outer_unit: null,
    mounting_depth: null,
    airflow: null,
    description: r.description,
    owner: null,
    comments: "",
    tags: nestedTags(v, r.tags),
    custom_fields: customFields(v, "dcim.rack", r.custom_fields),
    created: r.created,
    last_updated: r.last_updated,
    device_count: v.count("devicesPerRack", v.data.devices, (d) => d.rack).get(r.id) ?? 0,
    powerfeed_count: 0,
  };
}

function renderDeviceType(v: View, t: DeviceTypeRecord): Json {
  const m = v.manufacturer(t.manufacturer);
  return {
    id: t.id,
    url: v.api(`dcim/device-types/${t.id}/`),
    display_url: v.ui(`dcim/device-types/${t.id}/`),
    display: t.model,
    manufacturer: m ? briefManufacturer(v, m) : null,
    default_platform: null,
    model: t.model,
    slug: t.slug,
    part_number: t.part_number,
    u_height: t.u_height,
    exclude_from_utilization: false,
    is_full_depth: t.is_full_depth,
    subdevice_role: null,
    airflow: choice(AIRFLOW, t.airflow),
    weight: null,
    weight_unit: null,
    front_image: null,
    rear_image: null,
    description: t.description,
    owner: null,
    comments: "",
    tags: nestedTags(v, t.tags),
    custom_fields: customFields(v, "dcim.devicetype", t.custom_fields),
    created: t.created,
    last_updated: t.last_updated,
    device_count: v.count("devicesPerType", v.data.devices, (d) => d.device_type).get(t.id) ?? 0,
    console_port_template_count: 0,
    console_server_port_template_count: 0,
    power_port_template_count: 0,
    power_outlet_template_count: 0,
    interface_template_count: t.interface_template_count,
    front_port_template_count: 0,
    rear_port_template_count: 0,
    device_bay_template_count: 0,
    module_bay_template_count: 0,
    inventory_item_template_count: 0,
  };
}

function renderDeviceRole(v: View, r: DeviceRoleRecord): Json {
  return {
    id: r.id,
    url: v.api(`dcim/device-roles/${r.id}/`),
    display_url: v.ui(`dcim/device-roles/${r.id}/`),
    display: r.name,
    name: r.name,
    slug: r.slug,
    color: r.color,
    vm_role: r.vm_role,
    config_template: null,
    parent: null,
    description: r.description,
    tags: nestedTags(v, r.tags),
    custom_fields: customFields(v, "dcim.devicerole", r.custom_fields),
    created: r.created,
    last_updated: r.last_updated,
    device_count: v.count("devicesPerRole", v.data.devices, (d) => d.role).get(r.id) ?? 0,
    virtualmachine_count: 0,
    owner: null,
    comments: "",
    _depth: 0,
  };
}

function renderCluster(v: View, c: ClusterRecord): Json {
  const type = v.clusterType(c.type);
  const site = c.site != null ? v.site(c.site) : undefined;
  return {
    id: c.id,
    url: v.api(`virtualization/clusters/${c.id}/`),
    display_url: v.ui(`virtualization/clusters/${c.id}/`),
    display: c.name,
    name: c.name,
    type: type ? briefClusterType(v, type) : null,
    group: null,
    status: choice(CLUSTER_STATUS, c.status),
    tenant: null,
    scope_type: site ? "dcim.site" : null,
    scope_id: site ? site.id : null,
    scope: site ? briefSite(v, site) : null,
    description: c.description,
    owner: null,
    comments: "",
    tags: nestedTags(v, c.tags),
    custom_fields: customFields(v, "virtualization.cluster", c.custom_fields),
    created: c.created,
    last_updated: c.last_updated,
    device_count: v.count("devicesPerCluster", v.data.devices, (d) => d.cluster).get(c.id) ?? 0,
    virtualmachine_count: 0,
    allocated_vcpus: null,
    allocated_memory: null,
    allocated_disk: null,
  };
}

function renderTag(v: View, t: TagRecord): Json {
  const tagged = v.tagged().get(t.id) ?? 0;
  return {
    id: t.id,
    url: v.api(`extras/tags/${t.id}/`),
    display_url: v.ui(`extras/tags/${t.id}/`),
    display: t.name,
    name: t.name,
    slug: t.slug,
    color: t.color,
    description: t.description,
    weight: t.weight,
    object_types: [],
    tagged_items: tagged,
    created: t.created,
    last_updated: t.last_updated,
  };
}

/** The device's rendered config context: matching active contexts by weight, then name, deep-merged; local data last. */
export function renderConfigContext(data: NetboxData, d: DeviceRecord): Record<string, unknown> {
  const matches = (ids: number[], id: number | null) => ids.length === 0 || (id != null && ids.includes(id));
  const contexts = data.configContexts
    .filter(
      (c) =>
        c.is_active &&
        matches(c.sites, d.site) &&
        matches(c.roles, d.role) &&
        matches(c.device_types, d.device_type) &&
        matches(c.clusters, d.cluster),
    )
    .sort((a, b) => a.weight - b.weight || a.name.localeCompare(b.name));
  let out: Record<string, unknown> = {};
  for (const c of contexts) out = deepMerge(out, c.data);
  if (d.local_context_data) out = deepMerge(out, d.local_context_data);
  return out;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isPlainObject(prev) && isPlainObject(v) ? deepMerge(prev, v) : structuredClone(v);
  }
  return out;
}
const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

function renderDevice(v: View, d: DeviceRecord): Json {
  const type = v.deviceType(d.device_type);
  const role = v.role(d.role);
  const site = v.site(d.site);
  const location = d.location != null ? v.location(d.location) : undefined;
  const rack = d.rack != null ? v.rack(d.rack) : undefined;
  const ip4 = d.primary_ip4 != null ? v.ip(d.primary_ip4) : undefined;
  const oob = d.oob_ip != null ? v.ip(d.oob_ip) : undefined;
  const cluster = d.cluster != null ? v.cluster(d.cluster) : undefined;
  return {
    id: d.id,
    url: v.api(`dcim/devices/${d.id}/`),
    display_url: v.ui(`dcim/devices/${d.id}/`),
    display: deviceDisplay(d),
    name: d.name,
    device_type: type ? briefDeviceType(v, type) : null,
    role: role ? briefRole(v, role) : null,
    tenant: null,
    platform: null,
    serial: d.serial,
    asset_tag: d.asset_tag,
    site: site ? briefSite(v, site) : null,
    location: location ? briefLocation(v, location) : null,
    rack: rack ? briefRack(v, rack) : null,
    position: d.position,
    face: choice(FACE, d.face),
    latitude: null,
    longitude: null,
    parent_device: null,
    status: choice(DEVICE_STATUS, d.status),
    airflow: choice(AIRFLOW, d.airflow),
    // Device.primary_ip prefers IPv6 unless PREFER_IPV4; only IPv4 is modelled here.
    primary_ip: ip4 ? briefIp(v, ip4) : null,
    primary_ip4: ip4 ? briefIp(v, ip4) : null,
    primary_ip6: null,
    oob_ip: oob ? briefIp(v, oob) : null,
    cluster: cluster ? briefCluster(v, cluster) : null,
    virtual_chassis: null,
    vc_position: null,
    vc_priority: null,
    description: d.description,
    owner: null,
    comments: d.comments,
    config_template: null,
    config_context: renderConfigContext(v.data, d),
    local_context_data: d.local_context_data,
    tags: nestedTags(v, d.tags),
    custom_fields: customFields(v, "dcim.device", d.custom_fields),
    created: d.created,
    last_updated: d.last_updated,
    console_port_count: 0,
    console_server_port_count: 0,
    power_port_count: 0,
    power_outlet_count: 0,
    interface_count: v.count("interfacesPerDevice", v.data.interfaces, (i) => i.device).get(d.id) ?? 0,
    front_port_count: 0,
    rear_port_count: 0,
    device_bay_count: 0,
    module_bay_count: 0,
    inventory_item_count: 0,
  };
}

function renderInterface(v: View, i: InterfaceRecord): Json {
  const d = v.device(i.device);
  const link = v.cableOf().get(i.id);
  const peers = link
    ? (link.end === "A" ? link.cable.b : link.cable.a).map((id) => v.iface(id)).filter((p): p is InterfaceRecord => !!p)
    : [];
  const macs = v.macsOf().get(i.id) ?? [];
  const primaryMac = i.primary_mac_address != null ? v.mac(i.primary_mac_address) : undefined;
  // A direct interface-to-interface cable is a complete, active path whose far end is the peer.
  const endpoints = peers.length ? peers.map((p) => briefInterface(v, p)) : null;
  return {
    id: i.id,
    url: v.api(`dcim/interfaces/${i.id}/`),
    display_url: v.ui(`dcim/interfaces/${i.id}/`),
    display: componentDisplay(i),
    device: d ? briefDevice(v, d) : null,
    vdcs: [],
    module: null,
    name: i.name,
    label: i.label,
    type: choice(INTERFACE_TYPES, i.type),
    enabled: i.enabled,
    parent: null,
    bridge: null,
    bridge_interfaces: [],
    lag: null,
    mtu: i.mtu,
    mac_address: primaryMac ? primaryMac.mac_address : null,
    primary_mac_address: primaryMac ? briefMac(v, primaryMac) : null,
    mac_addresses: macs.map((m) => briefMac(v, m)),
    speed: i.speed,
    duplex: null,
    wwn: null,
    mgmt_only: i.mgmt_only,
    description: i.description,
    mode: null,
    rf_role: null,
    rf_channel: null,
    poe_mode: null,
    poe_type: null,
    rf_channel_frequency: null,
    rf_channel_width: null,
    tx_power: null,
    untagged_vlan: null,
    tagged_vlans: [],
    qinq_svlan: null,
    vlan_translation_policy: null,
    mark_connected: i.mark_connected,
    cable: link ? briefCable(v, link.cable) : null,
    cable_end: link ? link.end : null,
    wireless_link: null,
    link_peers: peers.map((p) => briefInterface(v, p)),
    link_peers_type: peers.length ? "dcim.interface" : null,
    wireless_lans: [],
    vrf: null,
    l2vpn_termination: null,
    connected_endpoints: endpoints,
    connected_endpoints_type: endpoints ? "dcim.interface" : null,
    // `obj._path and obj._path.is_complete and obj._path.is_active`: None without a path.
    connected_endpoints_reachable: endpoints ? true : null,
    owner: null,
    tags: nestedTags(v, i.tags),
    custom_fields: customFields(v, "dcim.interface", i.custom_fields),
    created: i.created,
    last_updated: i.last_updated,
    count_ipaddresses: v.ipsOf().get(i.id)?.length ?? 0,
    count_fhrp_groups: 0,
    _occupied: Boolean(link) || i.mark_connected,
  };
}

function termination(v: View, interfaceId: number): Json {
  const i = v.iface(interfaceId);
  return { object_type: "dcim.interface", object_id: interfaceId, object: i ? briefInterface(v, i) : null };
}

function renderCable(v: View, c: CableRecord): Json {
  return {
    id: c.id,
    url: v.api(`dcim/cables/${c.id}/`),
    display_url: v.ui(`dcim/cables/${c.id}/`),
    display: cableDisplay(c),
    type: choice(CABLE_TYPE, c.type),
    a_terminations: c.a.map((id) => termination(v, id)),
    b_terminations: c.b.map((id) => termination(v, id)),
    status: choice(CABLE_STATUS, c.status),
    profile: null,
    tenant: null,
    label: c.label,
    color: c.color,
    length: c.length,
    length_unit: choice(LENGTH_UNIT, c.length_unit),
    description: c.description,
    owner: null,
    comments: "",
    tags: nestedTags(v, c.tags),
    custom_fields: customFields(v, "dcim.cable", c.custom_fields),
    created: c.created,
    last_updated: c.last_updated,
  };
}

function renderMacAddress(v: View, m: MacAddressRecord): Json {
  const i = m.interface != null ? v.iface(m.interface) : undefined;
  return {
    id: m.id,
    url: v.api(`dcim/mac-addresses/${m.id}/`),
    display_url: v.ui(`dcim/mac-addresses/${m.id}/`),
    display: m.mac_address,
    mac_address: m.mac_address,
    assigned_object_type: i ? "dcim.interface" : null,
    assigned_object_id: i ? i.id : null,
    assigned_object: i ? briefInterface(v, i) : null,
    description: m.description,
    owner: null,
    comments: m.comments,
    tags: nestedTags(v, m.tags),
    custom_fields: customFields(v, "dcim.macaddress", m.custom_fields),
    created: m.created,
    last_updated: m.last_updated,
  };
}

function renderIpAddress(v: View, ip: IpAddressRecord): Json {
  const i = ip.interface != null ? v.iface(ip.interface) : undefined;
  return {
    id: ip.id,
    url: v.api(`ipam/ip-addresses/${ip.id}/`),
    display_url: v.ui(`ipam/ip-addresses/${ip.id}/`),
    display: ip.address,
    family: family(ip.address),
    address: ip.address,
    vrf: null,
    tenant: null,
    status: choice(IP_STATUS, ip.status),
    role: null,
    assigned_object_type: i ? "dcim.interface" : null,
    assigned_object_id: i ? i.id : null,
    assigned_object: i ? briefInterface(v, i) : null,
    nat_inside: null,
    nat_outside: [],
    dns_name: ip.dns_name,
    description: ip.description,
    owner: null,
    comments: ip.comments,
    tags: nestedTags(v, ip.tags),
    custom_fields: customFields(v, "ipam.ipaddress", ip.custom_fields),
    created: ip.created,
    last_updated: ip.last_updated,
  };
}

function renderConfigContextObject(v: View, c: ConfigContextRecord): Json {
  const list = <T>(ids: number[], get: (id: number) => T | undefined, brief: (v: View, x: T) => Json) =>
    ids
      .map(get)
      .filter((x): x is T => x !== undefined)
      .map((x) => brief(v, x));
  return {
    id: c.id,
    url: v.api(`extras/config-contexts/${c.id}/`),
    display_url: v.ui(`extras/config-contexts/${c.id}/`),
    display: c.name,
    name: c.name,
    weight: c.weight,
    profile: null,
    description: c.description,
    is_active: c.is_active,
    regions: [],
    site_groups: [],
    sites: list(c.sites, (id) => v.site(id), briefSite),
    locations: [],
    device_types: list(c.device_types, (id) => v.deviceType(id), briefDeviceType),
    roles: list(c.roles, (id) => v.role(id), briefRole),
    platforms: [],
    cluster_types: [],
    cluster_groups: [],
    clusters: list(c.clusters, (id) => v.cluster(id), briefCluster),
    tenant_groups: [],
    tenants: [],
    owner: null,
    tags: [],
    data_source: null,
    data_path: "",
    data_file: null,
    data_synced: null,
    data: c.data,
    created: c.created,
    last_updated: c.last_updated,
  };
}

const CONTENT_TYPE_LABEL: Record<string, string> = {
  "dcim.device": "DCIM | device",
  "dcim.interface": "DCIM | interface",
};

function renderObjectChange(v: View, c: ObjectChangeRecord): Json {
  let changed: Json | null = null;
  if (c.changed_object_type === "dcim.device") {
    const d = v.device(c.changed_object_id);
    changed = d ? briefDevice(v, d) : null;
  } else if (c.changed_object_type === "dcim.interface") {
    const i = v.iface(c.changed_object_id);
    changed = i ? briefInterface(v, i) : null;
  }
  const user = v.data.user;
  return {
    id: c.id,
    url: v.api(`core/object-changes/${c.id}/`),
    display_url: v.ui(`core/changelog/${c.id}/`),
    display: `${CONTENT_TYPE_LABEL[c.changed_object_type] ?? c.changed_object_type} ${c.object_repr} ${ACTION[c.action]!.toLowerCase()} by ${c.user_name}`,
    time: c.time,
    user:
      c.user_name === user.username
        ? { id: user.id, url: v.api(`users/users/${user.id}/`), display: user.username, username: user.username }
        : null,
    user_name: c.user_name,
    request_id: c.request_id,
    action: choice(ACTION, c.action),
    changed_object_type: c.changed_object_type,
    changed_object_id: c.changed_object_id,
    changed_object: changed,
    object_repr: c.object_repr,
    message: c.message,
    prechange_data: c.prechange_data,
    postchange_data: c.postchange_data,
  };
}

/** utilities.serialization.serialize_object(): model fields with foreign keys as ids, tags as sorted names. */
function serializeObject(
  data: NetboxData,
  objectType: string,
  rec: DeviceRecord | InterfaceRecord,
): Record<string, unknown> {
  const tagNames = rec.tags
    .map((id) => data.tags.find((t) => t.id === id)?.name)
    .filter((n): n is string => !!n)
    .sort();
  const { tags: _tags, id: _id, custom_fields, ...fields } = structuredClone(rec) as unknown as Record<string, unknown>;
  const flat: Record<string, unknown> = { ...fields };
  if (objectType === "dcim.interface") {
    const link = data.cables.find((c) => c.a.includes(rec.id) || c.b.includes(rec.id));
    flat.cable = link ? link.id : null;
    flat.cable_end = link ? (link.a.includes(rec.id) ? "A" : "B") : "";
  }
  return { ...flat, custom_fields: { ...(custom_fields as object) }, tags: tagNames };
}

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

class FilterError extends Error {
  constructor(
    readonly param: string,
    readonly messages: string[],
  ) {
    super(`${param}: ${messages.join(" ")}`);
  }
}

type Filter<T> = (values: string[], v: View) => (row: T) => boolean;

/** ModelMultipleChoiceFilter on a primary key: a malformed or unknown id is a 400. */
function modelIds<T>(
  param: string,
  rows: (v: View) => Array<{ id: number }>,
  get: (row: T, v: View) => number | number[] | null,
): Filter<T> {
  return (values, v) => {
    const known = new Set(rows(v).map((r) => r.id));
    const ids = new Set<number>();
    for (const raw of values) {
      if (!/^\d+$/.test(raw)) throw new FilterError(param, [`\u201c${raw}\u201d is not a valid value.`]);
      const id = Number(raw);
      if (!known.has(id))
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
      ids.add(id);
    }
    return (row) => {
      const got = get(row, v);
      return Array.isArray(got) ? got.some((g) => ids.has(g)) : got != null && ids.has(got);
    };
  };
}

/** ModelMultipleChoiceFilter with to_field_name (role=<slug>, device=<name>). */
function modelField<T, R extends { id: number }>(
  param: string,
  rows: (v: View) => R[],
  field: (r: R) => string | null,
  get: (row: T, v: View) => number | null,
): Filter<T> {
  return (values, v) => {
    const byField = new Map(rows(v).map((r) => [field(r), r.id]));
    const ids = new Set<number>();
    for (const raw of values) {
      const id = byField.get(raw);
      if (id === undefined)
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
      ids.add(id);
    }
    return (row) => {
      const got = get(row, v);
      return got != null && ids.has(got);
    };
  };
}

/** MultiValueNumberFilter: non-numbers are a 400, unknown numbers just match nothing. */
function numbers<T>(param: string, get: (row: T, v: View) => number | number[] | null): Filter<T> {
  return (values, v) => {
    const wanted = new Set<number>();
    for (const raw of values) {
      if (raw.trim() === "" || !Number.isFinite(Number(raw))) throw new FilterError(param, ["Enter a number."]);
      wanted.add(Number(raw));
    }
    return (row) => {
      const got = get(row, v);
      return Array.isArray(got) ? got.some((g) => wanted.has(g)) : got != null && wanted.has(got);
    };
  };
}

/** MultipleChoiceFilter. */
function choices<T>(param: string, labels: Record<string, string>, get: (row: T) => string | null): Filter<T> {
  return (values) => {
    for (const raw of values)
      if (!(raw in labels))
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
    const wanted = new Set(values);
    return (row) => wanted.has(get(row) ?? "");
  };
}

/** MultiValueCharFilter (exact). */
function exact<T>(get: (row: T) => string | null): Filter<T> {
  return (values) => {
    const wanted = new Set(values);
    return (row) => wanted.has(get(row) ?? "");
  };
}

/** MultiValueDateTimeFilter with a lookup (gte/lte/gt/lt). */
function dateTime<T>(param: string, op: "gte" | "lte" | "gt" | "lt", get: (row: T) => string): Filter<T> {
  return (values) => {
    const bounds = values.map((raw) => {
      const t = parseDjangoDateTime(raw);
      if (t === undefined) throw new FilterError(param, ["Enter a valid date/time."]);
      return t;
    });
    return (row) => {
      const t = Date.parse(get(row));
      return bounds.some((b) => (op === "gte" ? t >= b : op === "lte" ? t <= b : op === "gt" ? t > b : t < b));
    };
  };
}

/** What Django's DateTimeField accepts: ISO 8601 (with T or a space), optionally a date alone. */
function parseDjangoDateTime(raw: string): number | undefined {
  const s = raw.trim().replace(" ", "T");
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) return undefined;
  // Naive values are in TIME_ZONE, UTC by default.
  const withZone = /T/.test(s) && !/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? `${s}Z` : s;
  const t = Date.parse(withZone.length === 10 ? `${withZone}T00:00:00Z` : withZone);
  return Number.isNaN(t) ? undefined : t;
}

const updated = <T extends Timestamps>(): Record<string, Filter<T>> => ({
  last_updated__gte: dateTime("last_updated__gte", "gte", (r: T) => r.last_updated),
  last_updated__lte: dateTime("last_updated__lte", "lte", (r: T) => r.last_updated),
  last_updated__gt: dateTime("last_updated__gt", "gt", (r: T) => r.last_updated),
  last_updated__lt: dateTime("last_updated__lt", "lt", (r: T) => r.last_updated),
  created__gte: dateTime("created__gte", "gte", (r: T) => r.created),
});

const sitesOf = (v: View) => v.data.sites;

// ---------------------------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------------------------

interface Endpoint<T extends { id: number }> {
  path: string;
  objectType: string;
  /** The model's class name, as Django's get_object_or_404 names it. */
  objectName: string;
  rows: (data: NetboxData) => T[];
  render: (v: View, row: T) => Json;
  filters: Record<string, Filter<T>>;
  /** Model ordering, as the default for lists. */
  defaultOrdering?: string;
  patch?: (v: View, row: T, body: Record<string, unknown>) => PatchErrors;
}

type PatchErrors = Record<string, string[]> | undefined;

function endpoint<T extends { id: number }>(e: Endpoint<T>): Endpoint<{ id: number }> {
  return e as unknown as Endpoint<{ id: number }>;
}

const NOT_WRITABLE = (objectType: string, keys: string[]) => ({
  non_field_errors: [
    `netbox test server: PATCH of ${keys.map((k) => `'${k}'`).join(", ")} on ${objectType} is not implemented`,
  ],
});

function patchTags(v: View, raw: unknown): { ids: number[] } | { error: string[] } {
  if (!Array.isArray(raw)) return { error: [`Expected a list of items but got type "${typeof raw}".`] };
  const ids: number[] = [];
  for (const item of raw) {
    let tag: TagRecord | undefined;
    if (typeof item === "number") {
      tag = v.tag(item);
      if (!tag) return { error: [`Related object not found using the provided numeric ID: ${item}`] };
    } else if (isPlainObject(item)) {
      tag = v.data.tags.find((t) =>
        Object.entries(item).every(([k, val]) => (t as unknown as Record<string, unknown>)[k] === val),
      );
      if (!tag) {
        const attrs = Object.entries(item)
          .map(([k, val]) => `'${k}': ${typeof val === "string" ? `'${val}'` : String(val)}`)
          .join(", ");
        return { error: [`Related object not found using the provided attributes: {${attrs}}`] };
      }
    } else {
      return {
        error: [
          `Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: ${JSON.stringify(item)}`,
        ],
      };
    }
    if (!ids.includes(tag.id)) ids.push(tag.id);
  }
  return { ids };
}

const ENDPOINTS: Array<Endpoint<{ id: number }>> = [
  endpoint<SiteRecord>({
    path: "dcim/sites",
    objectType: "dcim.site",
    objectName: "Site",
    rows: (d) => d.sites,
    render: renderSite,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      name: exact((r) => r.name),
      status: choices("status", SITE_STATUS, (r) => r.status),
      ...updated<SiteRecord>(),
    },
  }),
  endpoint<LocationRecord>({
    path: "dcim/locations",
    objectType: "dcim.location",
    objectName: "Location",
    rows: (d) => d.locations,
    render: renderLocation,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      name: exact((r) => r.name),
      site_id: modelIds("site_id", sitesOf, (r) => r.site),
      ...updated<LocationRecord>(),
    },
  }),
  endpoint<RackRecord>({
    path: "dcim/racks",
    objectType: "dcim.rack",
    objectName: "Rack",
    rows: (d) => d.racks,
    render: renderRack,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      site_id: modelIds("site_id", sitesOf, (r) => r.site),
      location_id: modelIds(
        "location_id",
        (v) => v.data.locations,
        (r) => r.location,
      ),
      ...updated<RackRecord>(),
    },
  }),
  endpoint<DeviceTypeRecord>({
    path: "dcim/device-types",
    objectType: "dcim.devicetype",
    objectName: "DeviceType",
    rows: (d) => d.deviceTypes,
    render: renderDeviceType,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      model: exact((r) => r.model),
      manufacturer_id: modelIds(
        "manufacturer_id",
        (v) => v.data.manufacturers,
        (r) => r.manufacturer,
      ),
      ...updated<DeviceTypeRecord>(),
    },
  }),
  endpoint<DeviceRoleRecord>({
    path: "dcim/device-roles",
    objectType: "dcim.devicerole",
    objectName: "DeviceRole",
    rows: (d) => d.deviceRoles,
    render: renderDeviceRole,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      name: exact((r) => r.name),
      ...updated<DeviceRoleRecord>(),
    },
  }),
  endpoint<DeviceRecord>({
    path: "dcim/devices",
    objectType: "dcim.device",
    objectName: "Device",
    rows: (d) => d.devices,
    render: renderDevice,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      status: choices("status", DEVICE_STATUS, (r) => r.status),
      site_id: modelIds("site_id", sitesOf, (r) => r.site),
      site: modelField(
        "site",
        sitesOf,
        (s: SiteRecord) => s.slug,
        (r) => r.site,
      ),
      location_id: modelIds(
        "location_id",
        (v) => v.data.locations,
        (r) => r.location,
      ),
      rack_id: modelIds(
        "rack_id",
        (v) => v.data.racks,
        (r) => r.rack,
      ),
      role_id: modelIds(
        "role_id",
        (v) => v.data.deviceRoles,
        (r) => r.role,
      ),
      role: modelField(
        "role",
        (v) => v.data.deviceRoles,
        (x: DeviceRoleRecord) => x.slug,
        (r) => r.role,
      ),
      device_type_id: modelIds(
        "device_type_id",
        (v) => v.data.deviceTypes,
        (r) => r.device_type,
      ),
      cluster_id: modelIds(
        "cluster_id",
        (v) => v.data.clusters,
        (r) => r.cluster,
      ),
      serial: exact((r) => r.serial),
      ...updated<DeviceRecord>(),
    },
    patch: (v, row, body): PatchErrors => {
      const unsupported = Object.keys(body).filter(
        (k) => !["status", "custom_fields", "tags", "description", "comments"].includes(k),
      );
      if (unsupported.length) return NOT_WRITABLE("dcim.device", unsupported);
      if ("status" in body) {
        if (typeof body.status !== "string" || !(body.status in DEVICE_STATUS))
          return { status: [`"${String(body.status)}" is not a valid choice.`] };
      }
      let customFieldsNext: Record<string, unknown> | undefined;
      if ("custom_fields" in body) {
        if (!isPlainObject(body.custom_fields))
          return { custom_fields: ["Invalid data. Expected a dictionary, but got " + typeof body.custom_fields + "."] };
        const known = v.data.customFields["dcim.device"] ?? [];
        const unknown = Object.keys(body.custom_fields).filter((k) => !known.includes(k));
        if (unknown.length)
          return { custom_fields: unknown.map((k) => `Unknown field name '${k}' in custom field data.`) };
        // A PATCH merges into the stored custom field data (CustomFieldsDataField, partial update).
        customFieldsNext = { ...row.custom_fields, ...body.custom_fields };
      }
      let tagsNext: number[] | undefined;
      if ("tags" in body) {
        const r = patchTags(v, body.tags);
        if ("error" in r) return { tags: r.error };
        tagsNext = r.ids;
      }
      for (const k of ["description", "comments"] as const)
        if (k in body && typeof body[k] !== "string") return { [k]: ["Not a valid string."] };
      const dev = row as DeviceRecord;
      if (typeof body.status === "string") dev.status = body.status;
      if (customFieldsNext) dev.custom_fields = customFieldsNext;
      if (tagsNext) dev.tags = tagsNext;
      if (typeof body.description === "string") dev.description = body.description;
      if (typeof body.comments === "string") dev.comments = body.comments;
      return undefined;
    },
  }),
  endpoint<InterfaceRecord>({
    path: "dcim/interfaces",
    objectType: "dcim.interface",
    objectName: "Interface",
    rows: (d) => d.interfaces,
    render: renderInterface,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      device_id: modelIds(
        "device_id",
        (v) => v.data.devices,
        (r) => r.device,
      ),
      device: modelField(
        "device",
        (v) => v.data.devices,
        (d: DeviceRecord) => d.name,
        (r) => r.device,
      ),
      site_id: modelIds("site_id", sitesOf, (r, v) => v.device(r.device)?.site ?? null),
      type: exact((r) => r.type),
      mgmt_only: exact((r) => (r.mgmt_only ? "true" : "false")),
      ...updated<InterfaceRecord>(),
    },
    patch: (_v, row, body): PatchErrors => {
      const unsupported = Object.keys(body).filter((k) => !["label", "description", "enabled"].includes(k));
      if (unsupported.length) return NOT_WRITABLE("dcim.interface", unsupported);
      if ("label" in body && typeof body.label !== "string") return { label: ["Not a valid string."] };
      if ("label" in body && (body.label as string).length > 64)
        return { label: ["Ensure this field has no more than 64 characters."] };
      if ("description" in body && typeof body.description !== "string")
        return { description: ["Not a valid string."] };
      if ("enabled" in body && typeof body.enabled !== "boolean") return { enabled: ["Must be a valid boolean."] };
      const i = row as InterfaceRecord;
      if (typeof body.label === "string") i.label = body.label;
      if (typeof body.description === "string") i.description = body.description;
      if (typeof body.enabled === "boolean") i.enabled = body.enabled;
      return undefined;
    },
  }),
  endpoint<CableRecord>({
    path: "dcim/cables",
    objectType: "dcim.cable",
    objectName: "Cable",
    rows: (d) => d.cables,
    render: renderCable,
    filters: {
      id: numbers("id", (r) => r.id),
      // CableFilterSet filters both by termination, through MultiValueNumberFilter methods.
      device_id: numbers("device_id", (r, v) => [...r.a, ...r.b].map((i) => v.iface(i)?.device ?? -1)),
      site_id: numbers("site_id", (r, v) =>
        [...r.a, ...r.b].map((i) => v.device(v.iface(i)?.device ?? -1)?.site ?? -1),
      ),
      status: choices("status", CABLE_STATUS, (r) => r.status),
      ...updated<CableRecord>(),
    },
  }),
  endpoint<MacAddressRecord>({
    path: "dcim/mac-addresses",
    objectType: "dcim.macaddress",
    objectName: "MACAddress",
    rows: (d) => d.macAddresses,
    render: renderMacAddress,
    // MACAddressFilterSet has device/device_id (methods over the assigned interface) but no site filter.
    filters: {
      id: numbers("id", (r) => r.id),
      mac_address: exact((r) => r.mac_address),
      device_id: numbers("device_id", (r, v) => (r.interface != null ? (v.iface(r.interface)?.device ?? null) : null)),
      interface_id: modelIds(
        "interface_id",
        (v) => v.data.interfaces,
        (r) => r.interface,
      ),
      ...updated<MacAddressRecord>(),
    },
  }),
  endpoint<IpAddressRecord>({
    path: "ipam/ip-addresses",
    objectType: "ipam.ipaddress",
    objectName: "IPAddress",
    rows: (d) => d.ipAddresses,
    render: renderIpAddress,
    // IPAddressFilterSet has device/device_id but no site filter (IP addresses have no site).
    filters: {
      id: numbers("id", (r) => r.id),
      address: exact((r) => r.address),
      device_id: numbers("device_id", (r, v) => (r.interface != null ? (v.iface(r.interface)?.device ?? null) : null)),
      interface_id: modelIds(
        "interface_id",
        (v) => v.data.interfaces,
        (r) => r.interface,
      ),
      status: choices("status", IP_STATUS, (r) => r.status),
      ...updated<IpAddressRecord>(),
    },
  }),
  endpoint<TagRecord>({
    path: "extras/tags",
    objectType: "extras.tag",
    objectName: "Tag",
    rows: (d) => d.tags,
    render: renderTag,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      name: exact((r) => r.name),
      ...updated<TagRecord>(),
    },
  }),
  endpoint<ClusterRecord>({
    path: "virtualization/clusters",
    objectType: "virtualization.cluster",
    objectName: "Cluster",
    rows: (d) => d.clusters,
    render: renderCluster,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      site_id: modelIds("site_id", sitesOf, (r) => r.site),
      type_id: modelIds(
        "type_id",
        (v) => v.data.clusterTypes,
        (r) => r.type,
      ),
      status: choices("status", CLUSTER_STATUS, (r) => r.status),
      ...updated<ClusterRecord>(),
    },
  }),
  endpoint<ConfigContextRecord>({
    path: "extras/config-contexts",
    objectType: "extras.configcontext",
    objectName: "ConfigContext",
    rows: (d) => d.configContexts,
    render: renderConfigContextObject,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      is_active: exact((r) => (r.is_active ? "true" : "false")),
      site_id: modelIds("site_id", sitesOf, (r) => r.sites),
      role_id: modelIds(
        "role_id",
        (v) => v.data.deviceRoles,
        (r) => r.roles,
      ),
      device_type_id: modelIds(
        "device_type_id",
        (v) => v.data.deviceTypes,
        (r) => r.device_types,
      ),
      cluster_id: modelIds(
        "cluster_id",
        (v) => v.data.clusters,
        (r) => r.clusters,
      ),
      ...updated<ConfigContextRecord>(),
    },
  }),
  endpoint<ObjectChangeRecord>({
    path: "core/object-changes",
    objectType: "core.objectchange",
    objectName: "ObjectChange",
    rows: (d) => d.objectChanges,
    render: renderObjectChange,
    defaultOrdering: "-time",
    filters: {
      id: numbers("id", (r) => r.id),
      // `time` is a DateTimeFromToRangeFilter: time_after is inclusive (gte), time_before too (lte).
      time_after: dateTime("time", "gte", (r) => r.time),
      time_before: dateTime("time", "lte", (r) => r.time),
      // MultiValueContentTypeFilter: "app_label.model"; a value it cannot resolve matches nothing.
      changed_object_type: exact((r) => r.changed_object_type),
      changed_object_id: numbers("changed_object_id", (r) => r.changed_object_id),
      action: choices("action", ACTION, (r) => r.action),
      request_id: exact((r) => r.request_id),
      user_name: exact((r) => r.user_name),
    },
  }),
];

const ORDERABLE = new Set(["id", "name", "time", "last_updated", "created", "slug", "model", "address", "mac_address"]);

function order<T extends { id: number }>(rows: T[], ordering: string | undefined): T[] {
  const keys = (ordering ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => ORDERABLE.has(k.replace(/^-/, "")));
  if (!keys.length) return [...rows].sort((a, b) => a.id - b.id);
  return [...rows].sort((a, b) => {
    for (const key of [...keys, "id"]) {
      const desc = key.startsWith("-");
      const f = key.replace(/^-/, "");
      const x = (a as unknown as Record<string, unknown>)[f];
      const y = (b as unknown as Record<string, unknown>)[f];
      const c = x === y ? 0 : x == null ? -1 : y == null ? 1 : (x as number | string) < (y as number | string) ? -1 : 1;
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

export interface NetboxRequestLog {
  method: string;
  path: string;
  query: Record<string, string[]>;
}

export interface NetboxServer {
  url: string;
  data: NetboxData;
  requests: NetboxRequestLog[];
  setDenied(types: string[]): void;
  /**
   * An edit as an operator makes it in NetBox's UI: mutates the stored device, interface or MAC
   * address (or deletes a device with its components), bumps last_updated and logs the
   * object change NetBox would, so change-log pollers see it.
   */
  edit(
    objectType: "dcim.device" | "dcim.interface" | "dcim.macaddress",
    id: number,
    mutate: ((rec: never) => void) | "delete",
  ): void;
  stop(): Promise<void>;
}

export interface StartNetboxServerOptions {
  /** Accepted token(s): a v1 token (40 hex, sent as `Token <t>`) and/or a v2 token (`nbt_<key>.<secret>`, sent as `Bearer <t>`). */
  token: string | string[];
  data?: NetboxData;
  /** Object types ("dcim.macaddress") the token's user may neither view nor change: 403. */
  deniedObjectTypes?: string[];
  /**
   * Build absolute URLs (`url`, `next`, ...) on this origin instead of the request's Host, as a
   * NetBox behind a reverse proxy without USE_X_FORWARDED_HOST does.
   */
  publicUrl?: string;
  /** Clock for writes (last_updated, object change time). */
  now?: () => Date;
}

/** NetBox's timestamp format: microseconds and a Z. */
export function netboxTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  extra: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "api-version": API_VERSION,
    "x-request-id": requestId,
    vary: "Accept, Cookie, Origin",
    allow: "GET, PATCH, HEAD, OPTIONS",
    ...extra,
  });
  res.end(text);
}

/** DRF's replace_query_param/remove_query_param: re-encode with sorted keys. */
function pageLink(
  base: string,
  pathname: string,
  query: URLSearchParams,
  set: Record<string, number | undefined>,
): string {
  const grouped = new Map<string, string[]>();
  for (const [k, v] of query) grouped.set(k, [...(grouped.get(k) ?? []), v]);
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) grouped.delete(k);
    else grouped.set(k, [String(v)]);
  }
  const qs = new URLSearchParams();
  for (const k of [...grouped.keys()].sort()) for (const v of grouped.get(k)!) qs.append(k, v);
  return `${base}${pathname}?${qs.toString()}`;
}

export async function startNetboxServer(opts: StartNetboxServerOptions): Promise<NetboxServer> {
  const data = opts.data ?? emptyNetboxData();
  const tokens = new Set(Array.isArray(opts.token) ? opts.token : [opts.token]);
  let denied = new Set(opts.deniedObjectTypes ?? []);
  const requests: NetboxRequestLog[] = [];
  const now = opts.now ?? (() => new Date());

  const authenticate = (header: string | undefined): string | undefined => {
    // DRF TokenAuthentication.authenticate(), with NetBox 4.5's two keywords.
    const parts = (header ?? "").trim().split(/\s+/).filter(Boolean);
    const keyword = parts[0]?.toLowerCase();
    if (keyword !== "token" && keyword !== "bearer") return "Authentication credentials were not provided.";
    if (parts.length === 1) return "Invalid token header. No credentials provided.";
    if (parts.length > 2) return "Invalid token header. Token string should not contain spaces.";
    const value = parts[1]!;
    if (keyword === "token") return !value.startsWith("nbt_") && tokens.has(value) ? undefined : "Invalid v1 token";
    return value.startsWith("nbt_") && tokens.has(value) ? undefined : "Invalid v2 token";
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    const url = new URL(req.url ?? "/", "http://localhost");
    const method = (req.method ?? "GET").toUpperCase();
    const query: Record<string, string[]> = {};
    for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
    requests.push({ method, path: url.pathname, query });
    const base = (opts.publicUrl ?? `http://${req.headers.host ?? "localhost"}`).replace(/\/+$/, "");

    let bodyText = "";
    for await (const chunk of req) bodyText += String(chunk);

    if (!url.pathname.endsWith("/")) {
      // Django's APPEND_SLASH (CommonMiddleware) redirects before any view runs.
      res.writeHead(301, { location: `${url.pathname}/${url.search}`, "content-length": 0 });
      res.end();
      return;
    }
    const authError = authenticate(req.headers.authorization);
    if (authError) return send(res, 403, { detail: authError }, requestId);

    if (url.pathname === "/api/status/") {
      if (method !== "GET" && method !== "HEAD")
        return send(res, 405, { detail: `Method "${method}" not allowed.` }, requestId);
      return send(
        res,
        200,
        {
          "django-version": "5.2.8",
          hostname: "netbox-test",
          installed_apps: {
            django_filters: "25.2",
            django_rq: "3.1",
            drf_spectacular: "0.29.0",
            mptt: "0.18.0",
            rest_framework: "3.16.1",
            taggit: "6.1.0",
            timezone_field: "7.1",
          },
          "netbox-version": NETBOX_VERSION,
          "netbox-full-version": NETBOX_VERSION,
          plugins: {},
          "python-version": "3.12.3",
          "rq-workers-running": 1,
        },
        requestId,
      );
    }

    const match = /^\/api\/([a-z-]+\/[a-z-]+)\/(?:(\d+)\/)?$/.exec(url.pathname);
    const ep = match ? ENDPOINTS.find((e) => e.path === match[1]) : undefined;
    if (!ep || !match) return send(res, 404, { detail: "Not found." }, requestId);
    if (denied.has(ep.objectType))
      return send(res, 403, { detail: "You do not have permission to perform this action." }, requestId);

    const v = new View(data, base);
    const rows = ep.rows(data);

    if (match[2] === undefined) {
      if (method !== "GET" && method !== "HEAD")
        return send(res, 405, { detail: `Method "${method}" not allowed.` }, requestId);
      let selected = rows;
      try {
        for (const [param, filter] of Object.entries(ep.filters)) {
          const values = url.searchParams.getAll(param).filter((x) => x !== "");
          if (!values.length) continue;
          const test = filter(values, v);
          selected = selected.filter(test);
        }
      } catch (err) {
        if (err instanceof FilterError) return send(res, 400, { [err.param]: err.messages }, requestId);
        throw err;
      }
      selected = order(selected, url.searchParams.get("ordering") ?? ep.defaultOrdering);

      // OptionalLimitOffsetPagination.get_limit()/LimitOffsetPagination.get_offset().
      const rawLimit = url.searchParams.get("limit");
      let limit = Math.min(PAGINATE_COUNT, MAX_PAGE_SIZE);
      if (rawLimit !== null) {
        const n = /^\d+$/.test(rawLimit.trim()) ? Number(rawLimit) : NaN;
        if (Number.isInteger(n) && n >= 0) limit = n === 0 ? MAX_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE);
      }
      const rawOffset = url.searchParams.get("offset");
      const offset = rawOffset !== null && /^\d+$/.test(rawOffset.trim()) ? Number(rawOffset) : 0;
      const count = selected.length;
      const page = count === 0 || offset > count ? [] : selected.slice(offset, offset + limit);
      const next =
        offset + limit < count
          ? pageLink(base, url.pathname, url.searchParams, { limit, offset: offset + limit })
          : null;
      const previous =
        offset <= 0
          ? null
          : offset - limit <= 0
            ? pageLink(base, url.pathname, url.searchParams, { limit, offset: undefined })
            : pageLink(base, url.pathname, url.searchParams, { limit, offset: offset - limit });
      return send(res, 200, { count, next, previous, results: page.map((r) => ep.render(v, r)) }, requestId);
    }

    const id = Number(match[2]);
    const row = rows.find((r) => r.id === id);
    if (!row) return send(res, 404, { detail: `No ${ep.objectName} matches the given query.` }, requestId);
    if (method === "GET" || method === "HEAD") return send(res, 200, ep.render(v, row), requestId);
    if (method !== "PATCH" || !ep.patch)
      return send(res, 405, { detail: `Method "${method}" not allowed.` }, requestId);

    let body: unknown;
    try {
      body = JSON.parse(bodyText || "{}");
    } catch (err) {
      return send(res, 400, { detail: `JSON parse error - ${(err as Error).message}` }, requestId);
    }
    if (!isPlainObject(body))
      return send(res, 400, { non_field_errors: ["Invalid data. Expected a dictionary, but got list."] }, requestId);
    const rec = row as unknown as DeviceRecord | InterfaceRecord;
    const before = serializeObject(data, ep.objectType, rec);
    const snapshot = structuredClone(rec);
    const errors = ep.patch(v, row, body);
    if (errors) {
      Object.assign(rec, snapshot); // validation runs before save in DRF: nothing is written
      return send(res, 400, errors, requestId);
    }
    const time = netboxTime(now());
    rec.last_updated = time; // auto_now: every save bumps it
    const after = serializeObject(data, ep.objectType, rec);
    const strip = ({ last_updated: _l, ...rest }: Record<string, unknown>) => rest;
    if (JSON.stringify(strip(before)) !== JSON.stringify(strip(after))) {
      data.objectChanges.push({
        id: (data.objectChanges.at(-1)?.id ?? 0) + 1,
        time,
        user_name: data.user.username,
        request_id: requestId,
        action: "update",
        changed_object_type: ep.objectType,
        changed_object_id: rec.id,
        object_repr: "device" in rec ? componentDisplay(rec) : deviceDisplay(rec),
        message: "",
        prechange_data: before,
        postchange_data: after,
      });
    }
    return send(res, 200, ep.render(new View(data, base), row), requestId);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        send(
          res,
          500,
          {
            error: String(err),
            exception: (err as Error)?.name ?? "Error",
            netbox_version: NETBOX_VERSION,
            python_version: "3.12.3",
          },
          "",
        );
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    data,
    requests,
    setDenied(types) {
      denied = new Set(types);
    },
    edit(objectType, id, mutate) {
      const time = netboxTime(now());
      const log = (
        type: string,
        objectId: number,
        repr: string,
        action: "update" | "delete",
        before: Record<string, unknown> | null,
        after: Record<string, unknown> | null,
      ) =>
        data.objectChanges.push({
          id: (data.objectChanges.at(-1)?.id ?? 0) + 1,
          time,
          user_name: data.user.username,
          request_id: randomUUID(),
          action,
          changed_object_type: type,
          changed_object_id: objectId,
          object_repr: repr,
          message: "",
          prechange_data: before,
          postchange_data: after,
        });
      if (objectType === "dcim.macaddress") {
        const mac = data.macAddresses.find((m) => m.id === id);
        if (!mac) throw new Error(`no MAC address ${id}`);
        const before = { ...mac } as unknown as Record<string, unknown>;
        (mutate as (rec: MacAddressRecord) => void)(mac);
        mac.last_updated = time;
        log(objectType, id, mac.mac_address, "update", before, { ...mac } as unknown as Record<string, unknown>);
        return;
      }
      const rows = (objectType === "dcim.device" ? data.devices : data.interfaces) as (
        DeviceRecord | InterfaceRecord
      )[];
      const rec = rows.find((r) => r.id === id);
      if (!rec) throw new Error(`no ${objectType} ${id}`);
      const before = serializeObject(data, objectType, rec);
      const repr = "device" in rec ? componentDisplay(rec) : deviceDisplay(rec);
      if (mutate === "delete") {
        if (objectType !== "dcim.device") throw new Error("only devices are deleted here");
        const ifaces = new Set(data.interfaces.filter((i) => i.device === id).map((i) => i.id));
        data.devices = data.devices.filter((d) => d.id !== id);
        data.interfaces = data.interfaces.filter((i) => !ifaces.has(i.id));
        data.macAddresses = data.macAddresses.filter((m) => m.interface === null || !ifaces.has(m.interface));
        data.cables = data.cables.filter((c) => !c.a.some((x) => ifaces.has(x)) && !c.b.some((x) => ifaces.has(x)));
        log(objectType, id, repr, "delete", before, null);
        return;
      }
      (mutate as (rec: DeviceRecord | InterfaceRecord) => void)(rec);
      rec.last_updated = time;
      log(objectType, id, repr, "update", before, serializeObject(data, objectType, rec));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A realistic, deterministic fleet
// ---------------------------------------------------------------------------------------------

const SITE_CATALOG = [
  {
    name: "IAD1",
    facility: "Ashburn DC7",
    tz: "America/New_York",
    address: "21715 Filigree Court, Ashburn, VA 20147",
    lat: 39.0438,
    lon: -77.4874,
  },
  {
    name: "PHX2",
    facility: "Phoenix PHX10",
    tz: "America/Phoenix",
    address: "2121 S Price Rd, Chandler, AZ 85286",
    lat: 33.3062,
    lon: -111.8413,
  },
  {
    name: "FRA1",
    facility: "Frankfurt FR5",
    tz: "Europe/Berlin",
    address: "Kleyerstrasse 90, 60326 Frankfurt am Main",
    lat: 50.1004,
    lon: 8.6278,
  },
  {
    name: "NRT1",
    facility: "Inzai Campus",
    tz: "Asia/Tokyo",
    address: "2-1 Matsuzaki, Inzai, Chiba 270-1337",
    lat: 35.8327,
    lon: 140.1453,
  },
  {
    name: "DFW3",
    facility: "Dallas DA11",
    tz: "America/Chicago",
    address: "1950 N Stemmons Fwy, Dallas, TX 75207",
    lat: 32.8006,
    lon: -96.8197,
  },
  {
    name: "AMS2",
    facility: "Amsterdam AM7",
    tz: "Europe/Amsterdam",
    address: "Kuiperbergweg 13, 1101 AE Amsterdam",
    lat: 52.3035,
    lon: 4.9383,
  },
];

interface PortTemplate {
  name: string;
  type: string;
  speed: number | null;
  mtu: number | null;
  mgmt: boolean;
  mac: boolean;
  /** Cabled to a leaf switch port. */
  uplink: boolean;
}
const port = (name: string, type: string, speed: number | null, o: Partial<PortTemplate> = {}): PortTemplate => ({
  name,
  type,
  speed,
  mtu: type.startsWith("infiniband") ? null : 9216,
  mgmt: false,
  mac: !type.startsWith("infiniband"),
  uplink: false,
  ...o,
});

const GPU_PORTS: PortTemplate[] = [
  port("bmc", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }),
  port("eno1", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eth0", "200gbase-x-qsfp56", 200_000_000, { uplink: true }),
  port("eth1", "200gbase-x-qsfp56", 200_000_000, { uplink: true }),
  port("ib0", "infiniband-ndr", 400_000_000),
  port("ib1", "infiniband-ndr", 400_000_000),
  port("ib2", "infiniband-ndr", 400_000_000),
  port("ib3", "infiniband-ndr", 400_000_000),
];
const CPU_PORTS: PortTemplate[] = [
  port("bmc", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }),
  port("eno1", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eno2", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eth0", "25gbase-x-sfp28", 25_000_000, { uplink: true }),
  port("eth1", "25gbase-x-sfp28", 25_000_000, { uplink: true }),
  port("eth2", "100gbase-x-qsfp28", 100_000_000),
  port("eth3", "100gbase-x-qsfp28", 100_000_000),
  port("eth4", "25gbase-x-sfp28", 25_000_000),
];

function portsFor(template: PortTemplate[], n: number): PortTemplate[] {
  const out = template.slice(0, n);
  for (let k = out.length; k < n; k++) out.push(port(`eth${k}`, "25gbase-x-sfp28", 25_000_000));
  return out;
}

const hex2 = (n: number) => (n & 0xff).toString(16).toUpperCase().padStart(2, "0");

/**
 * A fleet as a GPU cloud would have it in NetBox: per site two halls (locations) with racks, GPU
 * trays (GB300 NVL72, aarch64; HGX H200, x86_64), CPU hypervisors and nodes (PowerEdge R760)
 * and leaf switches; servers have 8 interfaces by default (BMC, host management, two Ethernet
 * uplinks cabled to leaf ports, InfiniBand or further Ethernet ports), MAC addresses as
 * dcim.macaddress objects assigned to interfaces and set as their primary_mac_address (NetBox
 * 4.2+), primary and out-of-band IPs, tags, one OpenStack cluster per site that the servers
 * belong to, and config contexts carrying mlxconfig_config, bios_config and firmware_config.
 * `devicesPerSite` counts every device of a site, leaf switches included. Deterministic: the
 * same options give the same store.
 */
export function realisticFleet(opts: {
  sites: number;
  devicesPerSite: number;
  interfacesPerDevice?: number;
}): NetboxData {
  const data = emptyNetboxData();
  const perDevice = opts.interfacesPerDevice ?? 8;
  const epoch = Date.parse("2025-03-01T08:00:00Z");
  const at = (minutes: number) => netboxTime(new Date(epoch + minutes * 60_000));
  const t0 = at(0);
  const stamp = { created: t0, last_updated: t0 };
  data.customFields = { "dcim.device": ["platform_class"], "dcim.devicetype": ["cpu_architecture"] };

  const tag = (name: string, color: string, description: string) => {
    const t: TagRecord = { id: data.tags.length + 1, name, slug: name, color, description, weight: 1000, ...stamp };
    data.tags.push(t);
    return t.id;
  };
  const tFleet = tag("fleet-managed", "2196f3", "Managed by the fleet manager");
  const tBurnIn = tag("burn-in", "ff9800", "In burn-in testing");
  const tGpu = tag("gpu", "76b900", "");
  tag("maintenance", "f44336", "Under maintenance");
  tag("rma", "9e9e9e", "Returned to the vendor");

  const manufacturer = (name: string, slug: string) => {
    data.manufacturers.push({ id: data.manufacturers.length + 1, name, slug, description: "", ...stamp });
    return data.manufacturers.length;
  };
  const mNvidia = manufacturer("NVIDIA", "nvidia");
  const mSupermicro = manufacturer("Supermicro", "supermicro");
  const mDell = manufacturer("Dell", "dell");

  const deviceType = (
    manufacturerId: number,
    model: string,
    slug: string,
    part: string,
    u: number,
    arch: string | null,
    ports: number,
  ) => {
    data.deviceTypes.push({
      id: data.deviceTypes.length + 1,
      manufacturer: manufacturerId,
      model,
      slug,
      part_number: part,
      u_height: u,
      is_full_depth: true,
      airflow: "front-to-rear",
      description: "",
      interface_template_count: ports,
      tags: [],
      custom_fields: arch ? { cpu_architecture: arch } : {},
      ...stamp,
    });
    return data.deviceTypes.length;
  };
  const dtGb300 = deviceType(
    mNvidia,
    "GB300 NVL72 Compute Tray",
    "gb300-nvl72-compute-tray",
    "",
    1,
    "aarch64",
    perDevice,
  );
  const dtH200 = deviceType(
    mSupermicro,
    "SYS-821GE-TNHR HGX H200",
    "sys-821ge-tnhr-hgx-h200",
    "SYS-821GE-TNHR",
    8,
    "x86_64",
    perDevice,
  );
  const dtR760 = deviceType(mDell, "PowerEdge R760", "poweredge-r760", "", 2, "x86_64", perDevice);
  const dtSn5600 = deviceType(mNvidia, "SN5600", "sn5600", "920-9N42F-00RI-7C0", 2, null, 64);

  const role = (name: string, slug: string, color: string) => {
    data.deviceRoles.push({
      id: data.deviceRoles.length + 1,
      name,
      slug,
      color,
      vm_role: false,
      description: "",
      tags: [],
      custom_fields: {},
      ...stamp,
    });
    return data.deviceRoles.length;
  };
  const rGpu = role("GPU node", "gpu-node", "76b900");
  const rCpu = role("CPU node", "cpu-node", "2196f3");
  const rHyp = role("Hypervisor", "hypervisor", "9c27b0");
  const rLeaf = role("Leaf switch", "leaf-switch", "607d8b");

  data.clusterTypes.push({ id: 1, name: "OpenStack", slug: "openstack", description: "", ...stamp });

  const mlx = { LINK_TYPE_P1: "IB", LINK_TYPE_P2: "IB", SRIOV_EN: "1", NUM_OF_VFS: "16", ADVANCED_PCI_SETTINGS: "1" };
  data.configContexts.push(
    {
      id: 1,
      name: "fleet-defaults",
      weight: 100,
      description: "Defaults for every device",
      is_active: true,
      sites: [],
      roles: [],
      device_types: [],
      clusters: [],
      data: { ntp_servers: ["10.0.0.1", "10.0.0.2"], firmware_config: { policy: "pinned" } },
      ...stamp,
    },
    {
      id: 2,
      name: "gb300-firmware",
      weight: 1000,
      description: "Firmware, BIOS and ConnectX settings for GB300 NVL72 compute trays",
      is_active: true,
      sites: [],
      roles: [],
      device_types: [dtGb300],
      clusters: [],
      data: {
        mlxconfig_config: mlx,
        bios_config: { BootMode: "Uefi", SriovGlobalEnable: "Enabled", NumaNodesPerSocket: "1" },
        firmware_config: { bmc: "25.04-1", cx8: "40.45.1200", gpu_vbios: "97.00.AB.00.01" },
      },
      ...stamp,
    },
    {
      id: 3,
      name: "h200-baseline",
      weight: 1000,
      description: "HGX H200 baseline",
      is_active: true,
      sites: [],
      roles: [],
      device_types: [dtH200],
      clusters: [],
      data: {
        mlxconfig_config: { ...mlx, LINK_TYPE_P1: "IB" },
        bios_config: { BootMode: "Uefi", SriovGlobalEnable: "Enabled", IOMMU: "Enabled" },
        firmware_config: { bmc: "01.04.08", bios: "2.6", cx7: "28.43.1014" },
      },
      ...stamp,
    },
    {
      id: 4,
      name: "r760-baseline",
      weight: 1000,
      description: "PowerEdge R760 baseline",
      is_active: true,
      sites: [],
      roles: [],
      device_types: [dtR760],
      clusters: [],
      data: {
        mlxconfig_config: { LINK_TYPE_P1: "ETH", SRIOV_EN: "1", NUM_OF_VFS: "32" },
        bios_config: { BootMode: "Uefi", ProcVirtualization: "Enabled", SysProfile: "PerfOptimized" },
        firmware_config: { idrac: "7.10.70.00", bios: "2.3.5" },
      },
      ...stamp,
    },
  );

  const oui: Record<number, number[]> = {
    [mNvidia]: [0xb8, 0x3f, 0xd2],
    [mSupermicro]: [0x3c, 0xec, 0xef],
    [mDell]: [0xb0, 0x7b, 0x25],
  };
  let macCounter = 0;
  const nextMac = (manufacturerId: number) => {
    macCounter++;
    const o = oui[manufacturerId]!;
    return [...o, (macCounter >> 16) & 0xff, (macCounter >> 8) & 0xff, macCounter & 0xff].map(hex2).join(":");
  };

  const addInterface = (deviceId: number, p: PortTemplate, manufacturerId: number, time: string): InterfaceRecord => {
    const i: InterfaceRecord = {
      id: data.interfaces.length + 1,
      device: deviceId,
      name: p.name,
      label: "",
      type: p.type,
      enabled: true,
      mtu: p.mtu,
      speed: p.speed,
      mgmt_only: p.mgmt,
      description: "",
      primary_mac_address: null,
      mark_connected: false,
      tags: [],
      custom_fields: {},
      created: time,
      last_updated: time,
    };
    data.interfaces.push(i);
    if (p.mac) {
      const m: MacAddressRecord = {
        id: data.macAddresses.length + 1,
        mac_address: nextMac(manufacturerId),
        interface: i.id,
        description: "",
        comments: "",
        tags: [],
        custom_fields: {},
        created: time,
        last_updated: time,
      };
      data.macAddresses.push(m);
      i.primary_mac_address = m.id;
    }
    return i;
  };
  const addIp = (address: string, interfaceId: number, dns: string, time: string) => {
    const ip: IpAddressRecord = {
      id: data.ipAddresses.length + 1,
      address,
      status: "active",
      interface: interfaceId,
      dns_name: dns,
      description: "",
      comments: "",
      tags: [],
      custom_fields: {},
      created: time,
      last_updated: time,
    };
    data.ipAddresses.push(ip);
    return ip.id;
  };

  let deviceSeq = 0;
  for (let s = 0; s < opts.sites; s++) {
    const cat = SITE_CATALOG[s % SITE_CATALOG.length]!;
    const round = Math.floor(s / SITE_CATALOG.length);
    const name = round ? `${cat.name}-${round + 1}` : cat.name;
    const slug = name.toLowerCase();
    const site: SiteRecord = {
      id: s + 1,
      name,
      slug,
      status: "active",
      facility: cat.facility,
      time_zone: cat.tz,
      description: "",
      physical_address: cat.address,
      latitude: cat.lat,
      longitude: cat.lon,
      tags: [],
      custom_fields: {},
      ...stamp,
    };
    data.sites.push(site);
    const cluster: ClusterRecord = {
      id: s + 1,
      name: `${slug}-compute`,
      type: 1,
      status: "active",
      site: site.id,
      description: "",
      tags: [],
      custom_fields: {},
      ...stamp,
    };
    data.clusters.push(cluster);
    const halls = ["A", "B"].map((h) => {
      const l: LocationRecord = {
        id: data.locations.length + 1,
        name: `Hall ${h}`,
        slug: `${slug}-hall-${h.toLowerCase()}`,
        site: site.id,
        status: "active",
        description: "",
        tags: [],
        custom_fields: {},
        ...stamp,
      };
      data.locations.push(l);
      return l;
    });

    const leafCount = Math.max(1, Math.ceil(opts.devicesPerSite / 16));
    const servers = Math.max(0, opts.devicesPerSite - leafCount);
    const rackCount = Math.max(halls.length, Math.ceil(servers / 8));
    const racks: RackRecord[] = [];
    for (let r = 0; r < rackCount; r++) {
      const rack: RackRecord = {
        id: data.racks.length + 1,
        name: `R${String(r + 1).padStart(2, "0")}`,
        site: site.id,
        location: halls[r % halls.length]!.id,
        status: "active",
        u_height: 48,
        description: "",
        tags: [],
        custom_fields: {},
        ...stamp,
      };
      data.racks.push(rack);
      racks.push(rack);
    }
    const cursor = new Map<number, number>(racks.map((r) => [r.id, 2]));

    // Leaf switches first, so servers can be cabled to their ports.
    const leafPorts: InterfaceRecord[][] = [];
    for (let l = 0; l < leafCount; l++) {
      deviceSeq++;
      const rack = racks[l % racks.length]!;
      const time = at(deviceSeq);
      const leaf: DeviceRecord = {
        id: data.devices.length + 1,
        name: `leaf-${slug}-${String(l + 1).padStart(2, "0")}`,
        device_type: dtSn5600,
        role: rLeaf,
        serial: `MT${2400 + s}X${String(10000 + deviceSeq).slice(-5)}`,
        asset_tag: null,
        site: site.id,
        location: rack.location,
        rack: rack.id,
        position: 46,
        face: "front",
        status: "active",
        airflow: "front-to-rear",
        primary_ip4: null,
        oob_ip: null,
        cluster: null,
        description: "",
        comments: "",
        local_context_data: null,
        tags: [tFleet],
        custom_fields: { platform_class: null },
        created: t0,
        last_updated: time,
      };
      data.devices.push(leaf);
      const ports: InterfaceRecord[] = [];
      for (let p = 1; p <= 64; p++)
        ports.push(addInterface(leaf.id, port(`swp${p}`, "400gbase-x-osfp", 400_000_000), mNvidia, t0));
      const mgmt = addInterface(leaf.id, port("eth0", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }), mNvidia, t0);
      leaf.oob_ip = addIp(`10.${100 + s + 1}.0.${l + 2}/24`, mgmt.id, `${leaf.name}.oob.${slug}.example.net`, t0);
      leafPorts.push(ports);
    }

    let uplink = 0;
    for (let k = 0; k < servers; k++) {
      deviceSeq++;
      // Half GB300 trays, a quarter HGX H200, the rest R760 hypervisors and CPU nodes.
      const kind = k % 8 < 4 ? "gb300" : k % 8 < 6 ? "h200" : k % 8 === 6 ? "hyp" : "cpu";
      const typeId = kind === "gb300" ? dtGb300 : kind === "h200" ? dtH200 : dtR760;
      const type = data.deviceTypes[typeId - 1]!;
      const roleId = kind === "hyp" ? rHyp : kind === "cpu" ? rCpu : rGpu;
      const rack = racks[Math.floor(k / 8) % racks.length]!;
      const pos = cursor.get(rack.id)!;
      const fits = pos + type.u_height <= 46;
      cursor.set(rack.id, fits ? pos + type.u_height : pos);
      const prefix = kind === "gb300" || kind === "h200" ? "gpu" : kind === "hyp" ? "hv" : "cpu";
      const status =
        k % 20 === 7
          ? "planned"
          : k % 20 === 13
            ? "staged"
            : k % 29 === 5
              ? "failed"
              : k % 31 === 17
                ? "offline"
                : "active";
      const time = at(deviceSeq * 7);
      const dev: DeviceRecord = {
        id: data.devices.length + 1,
        name: `${prefix}-${slug}-${rack.name.toLowerCase()}-${String((k % 8) + 1).padStart(2, "0")}`,
        device_type: typeId,
        role: roleId,
        serial:
          kind === "gb300"
            ? `1794124${String(100000 + deviceSeq).slice(-6)}`
            : kind === "h200"
              ? `S4${String(3100000 + deviceSeq * 37)}`
              : (0x1f2e3d + deviceSeq * 7919).toString(36).toUpperCase().slice(-7),
        asset_tag: `AT-${slug.toUpperCase()}-${String(deviceSeq).padStart(5, "0")}`,
        site: site.id,
        location: rack.location,
        rack: rack.id,
        position: fits ? pos : null,
        face: fits ? "front" : null,
        status,
        airflow: "front-to-rear",
        primary_ip4: null,
        oob_ip: null,
        cluster: cluster.id,
        description: "",
        comments: "",
        local_context_data: k % 10 === 3 ? { bios_config: { SriovGlobalEnable: "Disabled" } } : null,
        tags: [tFleet, ...(kind === "gb300" || kind === "h200" ? [tGpu] : []), ...(k % 9 === 4 ? [tBurnIn] : [])],
        custom_fields: { platform_class: null },
        created: t0,
        last_updated: time,
      };
      data.devices.push(dev);
      const ports = portsFor(kind === "gb300" || kind === "h200" ? GPU_PORTS : CPU_PORTS, perDevice);
      const ifaces = ports.map((p) => addInterface(dev.id, p, type.manufacturer, t0));
      const host = `${dev.name}.${slug}.example.net`;
      const third = Math.floor(k / 250) + 1;
      const fourth = (k % 250) + 10;
      const bmc = ifaces.find((i) => i.mgmt_only);
      if (bmc)
        dev.oob_ip = addIp(
          `10.${100 + s + 1}.${third}.${fourth}/24`,
          bmc.id,
          `${dev.name}.oob.${slug}.example.net`,
          t0,
        );
      const primary = ifaces.find((_i, n) => ports[n]!.uplink) ?? ifaces.find((i) => !i.mgmt_only);
      if (primary) dev.primary_ip4 = addIp(`10.${s + 1}.${third}.${fourth}/24`, primary.id, host, t0);
      ifaces.forEach((i, n) => {
        if (!ports[n]!.uplink) return;
        const leafIndex = uplink % leafCount;
        const leafPort = leafPorts[leafIndex]![Math.floor(uplink / leafCount)];
        uplink++;
        if (!leafPort) return; // more uplinks than leaf ports: leave the rest uncabled
        data.cables.push({
          id: data.cables.length + 1,
          type: "mmf-om4",
          a: [i.id],
          b: [leafPort.id],
          status: dev.status === "planned" ? "planned" : "connected",
          label: "",
          color: "",
          length: 3 + (uplink % 5),
          length_unit: "m",
          description: "",
          tags: [],
          custom_fields: {},
          ...stamp,
        });
      });
    }
  }
  return data;
}
