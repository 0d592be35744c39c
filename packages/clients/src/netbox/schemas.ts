/**
 * The shapes of NetBox 4.x objects as this client reads them (fixtures and their sources in
 * packages/test-support/fixtures/netbox/SOURCES.md). Loose zod schemas: fields this client does
 * not name are kept, and fields added after NetBox 4.0 are optional.
 */
import { z } from "zod";

const Id = z.number().int();
const Timestamp = z.string().nullable();
/** A ChoiceField: `{value, label}`, or null when blank. Values stay strings: FIELD_CHOICES can add some. */
const Choice = z.looseObject({ value: z.string(), label: z.string() });
const Ref = { id: Id, url: z.string(), display: z.string() };
const NamedRef = z.looseObject({ ...Ref, name: z.string() });
const SlugRef = z.looseObject({ ...Ref, name: z.string(), slug: z.string() });

export const NetboxNestedTagSchema = z.looseObject({
  ...Ref,
  name: z.string(),
  slug: z.string(),
  color: z.string().optional(),
});
const Tags = z.array(NetboxNestedTagSchema);
const CustomFields = z.record(z.string(), z.unknown());
const BriefDevice = z.looseObject({ ...Ref, name: z.string().nullable() });
const BriefIp = z.looseObject({ ...Ref, address: z.string() });
const BriefMac = z.looseObject({ ...Ref, mac_address: z.string() });
const BriefCable = z.looseObject({ ...Ref, label: z.string().optional() });
const BriefDeviceType = z.looseObject({ ...Ref, manufacturer: SlugRef, model: z.string(), slug: z.string() });
/** The assigned object (interface) of a MAC or IP address, as NetBox nests it. */
const BriefAssignedInterface = z.looseObject({ ...Ref, name: z.string(), device: BriefDevice.nullable().optional() });

const common = {
  ...Ref,
  display_url: z.string().optional(), // 4.1
  tags: Tags,
  custom_fields: CustomFields,
  created: Timestamp,
  last_updated: Timestamp,
};

export const NetboxSiteSchema = z.looseObject({
  ...common,
  name: z.string(),
  slug: z.string(),
  status: Choice.nullable(),
  region: SlugRef.nullable(),
  group: SlugRef.nullable(),
  tenant: SlugRef.nullable(),
  facility: z.string(),
  time_zone: z.string().nullable(),
  description: z.string(),
  physical_address: z.string(),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
});
export type NetboxSite = z.infer<typeof NetboxSiteSchema>;

export const NetboxLocationSchema = z.looseObject({
  ...common,
  name: z.string(),
  slug: z.string(),
  site: SlugRef,
  parent: SlugRef.nullable(),
  status: Choice.nullable(),
  description: z.string(),
  _depth: z.number().int().optional(),
});
export type NetboxLocation = z.infer<typeof NetboxLocationSchema>;

export const NetboxRackSchema = z.looseObject({
  ...common,
  name: z.string(),
  facility_id: z.string().nullable(),
  site: SlugRef,
  location: SlugRef.nullable(),
  status: Choice.nullable(),
  u_height: z.number(),
  description: z.string(),
});
export type NetboxRack = z.infer<typeof NetboxRackSchema>;

export const NetboxDeviceTypeSchema = z.looseObject({
  ...common,
  manufacturer: SlugRef,
  model: z.string(),
  slug: z.string(),
  part_number: z.string(),
  u_height: z.number(),
  is_full_depth: z.boolean(),
  airflow: Choice.nullable().optional(),
  description: z.string(),
  device_count: z.number().int().optional(),
});
export type NetboxDeviceType = z.infer<typeof NetboxDeviceTypeSchema>;

export const NetboxDeviceRoleSchema = z.looseObject({
  ...common,
  name: z.string(),
  slug: z.string(),
  color: z.string(),
  vm_role: z.boolean(),
  description: z.string(),
  device_count: z.number().int().optional(),
});
export type NetboxDeviceRole = z.infer<typeof NetboxDeviceRoleSchema>;

export const NetboxClusterSchema = z.looseObject({
  ...common,
  name: z.string(),
  type: SlugRef,
  group: SlugRef.nullable(),
  status: Choice.nullable(),
  // 4.2 replaced `site` with a generic scope (region, site group, site or location).
  scope_type: z.string().nullable().optional(),
  scope_id: z.number().int().nullable().optional(),
  scope: z
    .looseObject({ ...Ref })
    .nullable()
    .optional(),
  description: z.string(),
  device_count: z.number().int().optional(),
});
export type NetboxCluster = z.infer<typeof NetboxClusterSchema>;

export const NetboxTagSchema = z.looseObject({
  ...Ref,
  display_url: z.string().optional(),
  name: z.string(),
  slug: z.string(),
  color: z.string(),
  description: z.string(),
  weight: z.number().int().optional(), // 4.0
  object_types: z.array(z.string()).optional(),
  tagged_items: z.number().int().optional(),
  created: Timestamp,
  last_updated: Timestamp,
});
export type NetboxTag = z.infer<typeof NetboxTagSchema>;

export const NetboxDeviceSchema = z.looseObject({
  ...common,
  name: z.string().nullable(),
  device_type: BriefDeviceType,
  role: SlugRef,
  tenant: SlugRef.nullable(),
  platform: SlugRef.nullable(),
  serial: z.string(),
  asset_tag: z.string().nullable(),
  site: SlugRef,
  location: SlugRef.nullable(),
  rack: NamedRef.nullable(),
  position: z.number().nullable(),
  face: Choice.nullable(),
  parent_device: BriefDevice.nullable().optional(),
  status: Choice,
  airflow: Choice.nullable().optional(),
  primary_ip: BriefIp.nullable().optional(),
  primary_ip4: BriefIp.nullable(),
  primary_ip6: BriefIp.nullable(),
  oob_ip: BriefIp.nullable().optional(),
  cluster: NamedRef.nullable(),
  description: z.string(),
  comments: z.string().optional(),
  // Absent with ?exclude=config_context.
  config_context: z.record(z.string(), z.unknown()).nullable().optional(),
  local_context_data: z.record(z.string(), z.unknown()).nullable().optional(),
  interface_count: z.number().int().optional(),
});
export type NetboxDevice = z.infer<typeof NetboxDeviceSchema>;

export const NetboxInterfaceSchema = z.looseObject({
  ...common,
  device: BriefDevice,
  name: z.string(),
  label: z.string(),
  type: Choice,
  enabled: z.boolean(),
  parent: z
    .looseObject({ ...Ref })
    .nullable()
    .optional(),
  lag: z
    .looseObject({ ...Ref })
    .nullable()
    .optional(),
  mtu: z.number().int().nullable(),
  // Since 4.2 MAC addresses are dcim.macaddress objects; `mac_address` is the primary one's, read-only.
  mac_address: z.string().nullable(),
  primary_mac_address: BriefMac.nullable().optional(),
  mac_addresses: z.array(BriefMac).optional(),
  speed: z.number().int().nullable(),
  wwn: z.string().nullable().optional(),
  mgmt_only: z.boolean(),
  description: z.string(),
  mark_connected: z.boolean(),
  cable: BriefCable.nullable(),
  cable_end: z.string().nullable(),
  // Polymorphic (interfaces, front ports, circuit terminations, ...); `*_type` says which.
  link_peers: z.array(z.unknown()),
  link_peers_type: z.string().nullable(),
  connected_endpoints: z.array(z.unknown()).nullable().optional(),
  connected_endpoints_type: z.string().nullable().optional(),
  connected_endpoints_reachable: z.boolean().nullable().optional(),
});
export type NetboxInterface = z.infer<typeof NetboxInterfaceSchema>;

const GenericObject = z.looseObject({ object_type: z.string(), object_id: Id, object: z.unknown() });
export const NetboxCableSchema = z.looseObject({
  ...common,
  // Not a {value, label} ChoiceField: the serializer leaves `type` to DRF, which renders the
  // model's bare choice value ("mmf-om4"), null or "" when unset (SOURCES.md S18).
  type: z.string().nullable(),
  a_terminations: z.array(GenericObject),
  b_terminations: z.array(GenericObject),
  status: Choice,
  label: z.string(),
  color: z.string(),
  length: z.number().nullable(),
  length_unit: Choice.nullable(),
  description: z.string(),
});
export type NetboxCable = z.infer<typeof NetboxCableSchema>;

export const NetboxMacAddressSchema = z.looseObject({
  ...common,
  mac_address: z.string(),
  assigned_object_type: z.string().nullable(),
  assigned_object_id: Id.nullable(),
  assigned_object: BriefAssignedInterface.nullable(),
  description: z.string(),
});
export type NetboxMacAddress = z.infer<typeof NetboxMacAddressSchema>;

export const NetboxIpAddressSchema = z.looseObject({
  ...common,
  family: z.looseObject({ value: z.number().int(), label: z.string() }),
  address: z.string(),
  vrf: NamedRef.nullable(),
  status: Choice,
  role: Choice.nullable(),
  assigned_object_type: z.string().nullable(),
  assigned_object_id: Id.nullable(),
  assigned_object: BriefAssignedInterface.nullable(),
  dns_name: z.string(),
  description: z.string(),
});
export type NetboxIpAddress = z.infer<typeof NetboxIpAddressSchema>;

export const NetboxObjectChangeSchema = z.looseObject({
  ...Ref,
  display_url: z.string().optional(),
  time: z.string(),
  user: z.looseObject({ ...Ref, username: z.string() }).nullable(),
  user_name: z.string(),
  request_id: z.string(),
  action: Choice,
  changed_object_type: z.string(),
  changed_object_id: Id,
  changed_object: z.unknown().optional(),
  object_repr: z.string(),
  message: z.string().optional(), // 4.4
  // `{}` where there is none (a create's prechange, a delete's postchange); null before 4.1.
  prechange_data: z.record(z.string(), z.unknown()).nullable(),
  postchange_data: z.record(z.string(), z.unknown()).nullable(),
});
export type NetboxObjectChange = z.infer<typeof NetboxObjectChangeSchema>;

const Assigned = z.array(z.looseObject({ ...Ref })).optional();
export const NetboxConfigContextSchema = z.looseObject({
  ...Ref,
  display_url: z.string().optional(),
  name: z.string(),
  weight: z.number().int(),
  description: z.string(),
  is_active: z.boolean(),
  regions: Assigned,
  site_groups: Assigned,
  sites: Assigned,
  locations: Assigned,
  device_types: Assigned,
  roles: Assigned,
  platforms: Assigned,
  cluster_types: Assigned,
  cluster_groups: Assigned,
  clusters: Assigned,
  tenant_groups: Assigned,
  tenants: Assigned,
  // Config contexts list their tags by slug, unlike other objects.
  tags: z.array(z.string()),
  data: z.record(z.string(), z.unknown()),
  created: Timestamp,
  last_updated: Timestamp,
});
export type NetboxConfigContext = z.infer<typeof NetboxConfigContextSchema>;

export const NetboxStatusSchema = z.looseObject({
  "netbox-version": z.string(),
  "django-version": z.string().optional(),
  "python-version": z.string().optional(),
  plugins: z.record(z.string(), z.unknown()).optional(),
  "rq-workers-running": z.number().int().optional(),
});
export type NetboxStatus = z.infer<typeof NetboxStatusSchema>;
