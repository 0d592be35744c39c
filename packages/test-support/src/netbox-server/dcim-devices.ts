/**
 * DCIM devices, their types and roles. Full representations: SOURCES.md S1
 * `DeviceWithConfigContext.md`, `DeviceType.md`, `DeviceRole.md` (4.3 made roles nested:
 * `parent`, `_depth`; S2 `roles.py`) (fixtures device-list-page.json, device-type.json,
 * device-role.json).
 */
import { AIRFLOW, DEVICE_STATUS, FACE, choice } from "./choices.ts";
import { NOT_WRITABLE, endpoint, isPlainObject, type Endpoint, type PatchErrors } from "./endpoint.ts";
import { choices, exact, modelField, modelIds, numbers, sitesOf, updated } from "./filters.ts";
import { patchTags, renderConfigContext } from "./extras.ts";
import {
  briefCluster,
  briefDeviceType,
  briefIp,
  briefLocation,
  briefManufacturer,
  briefRack,
  briefRole,
  briefSite,
  customFields,
  deviceDisplay,
  nestedTags,
} from "./nested.ts";
import type { DeviceRecord, DeviceRoleRecord, DeviceTypeRecord, SiteRecord } from "./store.ts";
import { atLeast } from "./status.ts";
import type { Json, View } from "./view.ts";

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
    display: deviceDisplay(v.data, d),
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

/** A PATCH of a device: only the fields the fleet manager writes, validated before anything is saved. */
function patchDevice(v: View, row: DeviceRecord, body: Record<string, unknown>): PatchErrors {
  const unsupported = Object.keys(body).filter(
    (k) =>
      !["status", "custom_fields", "tags", "description", "comments", "location", "rack", "position", "face"].includes(
        k,
      ),
  );
  if (unsupported.length) return NOT_WRITABLE("dcim.device", unsupported);
  const placed = placement(v, row, body);
  if ("errors" in placed) return placed.errors;
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
    // CustomFieldsMixin.clean() (S16): up to 4.4.9 an undefined field is a ValidationError, which
    // DRF renders under Django's non-field key; since 4.4.10 clean() drops it, and the PATCH
    // answers 200 having stored nothing for it.
    if (unknown.length && !atLeast(v.release, "4.4.10"))
      return { __all__: [`Unknown field name '${unknown[0]}' in custom field data.`] };
    // A PATCH merges into the stored custom field data (CustomFieldsDataField, partial update).
    const merged: Record<string, unknown> = { ...row.custom_fields, ...body.custom_fields };
    customFieldsNext = Object.fromEntries(Object.entries(merged).filter(([k]) => known.includes(k)));
  }
  let tagsNext: number[] | undefined;
  if ("tags" in body) {
    const r = patchTags(v, body.tags);
    if ("error" in r) return { tags: r.error };
    tagsNext = r.ids;
  }
  for (const k of ["description", "comments"] as const)
    if (k in body && typeof body[k] !== "string") return { [k]: ["Not a valid string."] };
  const dev = row;
  if (typeof body.status === "string") dev.status = body.status;
  if (customFieldsNext) dev.custom_fields = customFieldsNext;
  if (tagsNext) dev.tags = tagsNext;
  if (typeof body.description === "string") dev.description = body.description;
  if (typeof body.comments === "string") dev.comments = body.comments;
  Object.assign(dev, placed.next);
  return undefined;
}

type Placement = Pick<DeviceRecord, "location" | "rack" | "position" | "face">;

/**
 * Where a PATCH puts the device (location, rack, position, face), validated as NetBox 4.5 does
 * (SOURCES.md S19): related objects by numeric id (`get_related_object_by_attrs`), the serializer's
 * position (DecimalField, min 0.5) and face (ChoiceField, blank allowed), then `Device.clean()` on
 * the merged instance: rack and location in the device's site, rack in the location, no face or
 * position without a rack, position in half units and with a face, and the units free of every
 * other device in the rack (`Rack.get_available_units`, the device excluded; a full-depth device
 * takes both faces).
 */
function placement(
  v: View,
  row: DeviceRecord,
  body: Record<string, unknown>,
): { next: Placement } | { errors: PatchErrors } {
  const next: Placement = { location: row.location, rack: row.rack, position: row.position, face: row.face };
  for (const k of ["location", "rack"] as const) {
    if (!(k in body)) continue;
    const value = body[k];
    if (value === null) {
      next[k] = null;
      continue;
    }
    const id = typeof value === "number" || typeof value === "string" ? Number(value) : NaN;
    if (!Number.isInteger(id))
      return {
        errors: {
          [k]: [
            `Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: ${String(value)}`,
          ],
        },
      };
    if (!(k === "rack" ? v.rack(id) : v.location(id)))
      return { errors: { [k]: [`Related object not found using the provided numeric ID: ${id}`] } };
    next[k] = id;
  }
  if ("position" in body) {
    const p = body.position;
    if (p !== null && (typeof p !== "number" || !Number.isFinite(p)))
      return { errors: { position: ["A valid number is required."] } };
    if (typeof p === "number" && p < 0.5)
      return { errors: { position: ["Ensure this value is greater than or equal to 0.5."] } };
    next.position = p;
  }
  if ("face" in body) {
    const f = body.face;
    if (f !== null && f !== "" && !(typeof f === "string" && f in FACE))
      return { errors: { face: [`"${String(f)}" is not a valid choice.`] } };
    next.face = f === "" || f === null ? null : f;
  }
  const rack = next.rack != null ? v.rack(next.rack) : undefined;
  const location = next.location != null ? v.location(next.location) : undefined;
  if (rack && rack.site !== row.site)
    return { errors: { rack: [`Rack ${rack.name} does not belong to site ${siteName(v, row.site)}.`] } };
  if (location && location.site !== row.site)
    return { errors: { location: [`Location ${location.name} does not belong to site ${siteName(v, row.site)}.`] } };
  if (rack && location && rack.location !== location.id)
    return { errors: { rack: [`Rack ${rack.name} does not belong to location ${location.name}.`] } };
  if (!rack) {
    if (next.face) return { errors: { face: ["Cannot select a rack face without assigning a rack."] } };
    if (next.position) return { errors: { position: ["Cannot select a rack position without assigning a rack."] } };
  }
  if (next.position && next.position % 0.5)
    return { errors: { position: ["Position must be in increments of 0.5 rack units."] } };
  if (next.position && !next.face) return { errors: { face: ["Must specify rack face when defining rack position."] } };
  const type = v.deviceType(row.device_type);
  if (rack && next.position && type) {
    const end = next.position + type.u_height;
    const clash = v.data.devices.some((d) => {
      if (d.id === row.id || d.rack !== rack.id || d.position == null) return false;
      const t = v.deviceType(d.device_type);
      const h = t?.u_height ?? 1;
      const sameFace = type.is_full_depth || (t?.is_full_depth ?? true) || d.face === next.face;
      return sameFace && d.position < end && next.position! < d.position + h;
    });
    if (clash)
      return {
        errors: {
          position: [
            `U${next.position} is already occupied or does not have sufficient space to accommodate this device type: ${type.model} (${type.u_height}U)`,
          ],
        },
      };
  }
  return { next };
}

const siteName = (v: View, id: number) => v.data.sites.find((s) => s.id === id)?.name ?? String(id);

export const deviceEndpoints: Array<Endpoint<{ id: number }>> = [
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
    patch: patchDevice,
  }),
];
