/**
 * The NetBox test server's store: one record type per model, holding what NetBox stores (foreign
 * keys as ids). Counts, nested objects, URLs and `display` are derived when rendering.
 */

export type Timestamps = { created: string; last_updated: string };
export type Taggable = { tags: number[]; custom_fields: Record<string, unknown> };

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
/** A patch panel's front port; 4.5 maps it to rear port positions (PortMapping), here to one. */
export interface FrontPortRecord extends Timestamps {
  id: number;
  device: number;
  name: string;
  rear_port: number;
  rear_port_position: number;
  description: string;
}
export interface RearPortRecord extends Timestamps {
  id: number;
  device: number;
  name: string;
  positions: number;
  description: string;
}
/** What a cable end terminates on: an interface unless the cable says otherwise. */
export type TerminationType = "dcim.interface" | "dcim.frontport" | "dcim.rearport";
export interface CableRecord extends Timestamps, Taggable {
  id: number;
  /** A plain CharField with choices, null when unset (the model's `null=True`). */
  type: string | null;
  /** Termination ids on the A and B ends: interfaces, or the ports `a_type`/`b_type` name. */
  a: number[];
  b: number[];
  a_type?: TerminationType;
  b_type?: TerminationType;
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
  frontPorts: FrontPortRecord[];
  rearPorts: RearPortRecord[];
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
    frontPorts: [],
    rearPorts: [],
    cables: [],
    macAddresses: [],
    ipAddresses: [],
    configContexts: [],
    objectChanges: [],
    customFields: {},
    user: { id: 1, username: "fleet-agent" },
  };
}

/** NetBox's timestamp format: microseconds and a Z. */
export function netboxTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
