/**
 * DCIM interfaces and their MAC addresses (dcim.macaddress objects since NetBox 4.2). Full
 * representations: SOURCES.md S1 `Interface.md` (4.2's `primary_mac_address`/`mac_addresses`,
 * read-only `mac_address`, 4.5's `bridge_interfaces` and `owner`), `MACAddress.md`; link peers
 * and endpoints in their brief form (S2, S10) (fixtures interface.json, mac-address.json).
 */
import { INTERFACE_TYPES, choice } from "./choices.ts";
import { NOT_WRITABLE, endpoint, type Endpoint, type PatchErrors } from "./endpoint.ts";
import { exact, modelField, modelIds, numbers, sitesOf, updated } from "./filters.ts";
import {
  briefCable,
  briefDevice,
  briefInterface,
  briefMac,
  componentDisplay,
  customFields,
  nestedTags,
} from "./nested.ts";
import type { DeviceRecord, InterfaceRecord, MacAddressRecord } from "./store.ts";
import { farEnds, termination, traceFrom } from "./paths.ts";
import type { Json, View } from "./view.ts";

function renderInterface(v: View, i: InterfaceRecord): Json {
  const d = v.device(i.device);
  const link = farEnds(v, { type: "dcim.interface", id: i.id });
  const peers = (link?.far ?? []).map((t) => termination(v, t)).filter((p) => p !== null);
  const macs = v.macsOf().get(i.id) ?? [];
  const primaryMac = i.primary_mac_address != null ? v.mac(i.primary_mac_address) : undefined;
  // The path's far end: the cable's peer, or the interface behind one or more patch panels (paths.ts).
  const path = link ? traceFrom(v, i) : undefined;
  const endpoints = path?.endpoints.length ? path.endpoints.map((p) => briefInterface(v, p)) : null;
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
    link_peers: peers,
    link_peers_type: peers.length ? link!.far[0]!.type : null,
    wireless_lans: [],
    vrf: null,
    l2vpn_termination: null,
    connected_endpoints: endpoints,
    connected_endpoints_type: endpoints ? "dcim.interface" : null,
    // `obj._path and obj._path.is_complete and obj._path.is_active`: None without a path.
    connected_endpoints_reachable: path ? path.active : null,
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

/**
 * A PATCH of an interface: only the fields the fleet manager writes, validated before anything is
 * saved. `label` is a plain model field of NetBox 4.5's InterfaceSerializer (Meta.fields,
 * netbox/dcim/api/serializers_/device_components.py), the ComponentModel's
 * `CharField(max_length=64, blank=True)` (netbox/dcim/models/device_components.py): any string up
 * to 64 characters, "" clearing it; `display` then shows it (componentDisplay).
 */
function patchInterface(v: View, row: InterfaceRecord, body: Record<string, unknown>): PatchErrors {
  const unsupported = Object.keys(body).filter(
    (k) => !["label", "description", "enabled", "primary_mac_address"].includes(k),
  );
  if (unsupported.length) return NOT_WRITABLE("dcim.interface", unsupported);
  let primary: number | null | undefined;
  if ("primary_mac_address" in body) {
    // S19: a nested serializer takes the related object's numeric id (or null); then
    // BaseInterface.clean() refuses a MAC address assigned to another interface.
    const value = body.primary_mac_address;
    if (value === null) primary = null;
    else {
      const id = typeof value === "number" || typeof value === "string" ? Number(value) : NaN;
      if (!Number.isInteger(id))
        return {
          primary_mac_address: [
            `Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: ${String(value)}`,
          ],
        };
      const mac = v.mac(id);
      if (!mac) return { primary_mac_address: [`Related object not found using the provided numeric ID: ${id}`] };
      if (mac.interface !== null && mac.interface !== row.id) {
        const other = v.iface(mac.interface);
        return {
          primary_mac_address: [
            `MAC address ${mac.mac_address} is assigned to a different interface (${other ? componentDisplay(other) : mac.interface}).`,
          ],
        };
      }
      primary = id;
    }
  }
  if ("label" in body && typeof body.label !== "string") return { label: ["Not a valid string."] };
  if ("label" in body && (body.label as string).length > 64)
    return { label: ["Ensure this field has no more than 64 characters."] };
  if ("description" in body && typeof body.description !== "string") return { description: ["Not a valid string."] };
  if ("enabled" in body && typeof body.enabled !== "boolean") return { enabled: ["Must be a valid boolean."] };
  const i = row;
  if (typeof body.label === "string") i.label = body.label;
  if (typeof body.description === "string") i.description = body.description;
  if (typeof body.enabled === "boolean") i.enabled = body.enabled;
  if (primary !== undefined) i.primary_mac_address = primary;
  return undefined;
}

/** NetBox's MACAddressField: EUI-48 in any dialect netaddr parses, stored as `AA:BB:CC:DD:EE:FF` (S19). */
function macAddressOf(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const hex = value.trim().replace(/[-:.\s]/g, "");
  if (!/^[0-9a-fA-F]{12}$/.test(hex)) return undefined;
  return hex.toUpperCase().match(/../g)!.join(":");
}

/**
 * POST /api/dcim/mac-addresses/ (S19): `mac_address` required; `assigned_object_type` one of
 * the assignable models (here `dcim.interface`) with `assigned_object_id`; `description` and
 * `comments`. NetBox keeps no uniqueness on `mac_address`: the same MAC may be created twice,
 * which is why callers look it up first. Returns the stored record or NetBox's 400 body.
 */
export function createMacAddress(
  v: View,
  body: Record<string, unknown>,
  at: string,
): { record: MacAddressRecord } | { errors: Record<string, string[]> } {
  const allowed = ["mac_address", "assigned_object_type", "assigned_object_id", "description", "comments"];
  const unsupported = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unsupported.length) return { errors: NOT_WRITABLE("dcim.macaddress", unsupported) };
  if (!("mac_address" in body)) return { errors: { mac_address: ["This field is required."] } };
  const mac = macAddressOf(body.mac_address);
  if (!mac) return { errors: { mac_address: [`Invalid MAC address format: ${String(body.mac_address)}`] } };
  let iface: InterfaceRecord | undefined;
  const type = body.assigned_object_type ?? null;
  if (type !== null) {
    if (type !== "dcim.interface")
      return { errors: { assigned_object_type: [`Invalid content type: ${String(type)}`] } };
    const id = Number(body.assigned_object_id);
    iface = Number.isInteger(id) ? v.iface(id) : undefined;
    // GenericForeignKey to a missing object: the model's clean() finds no assigned object.
    if (!iface)
      return {
        errors: {
          assigned_object_id: [
            `Related object not found using the provided numeric ID: ${String(body.assigned_object_id)}`,
          ],
        },
      };
  }
  for (const k of ["description", "comments"] as const)
    if (k in body && typeof body[k] !== "string") return { errors: { [k]: ["Not a valid string."] } };
  const record: MacAddressRecord = {
    id: Math.max(0, ...v.data.macAddresses.map((m) => m.id)) + 1,
    mac_address: mac,
    interface: iface?.id ?? null,
    description: typeof body.description === "string" ? body.description : "",
    comments: typeof body.comments === "string" ? body.comments : "",
    tags: [],
    custom_fields: {},
    created: at,
    last_updated: at,
  };
  v.data.macAddresses.push(record);
  return { record };
}

export const interfaceEndpoints: Array<Endpoint<{ id: number }>> = [
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
    patch: patchInterface,
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
      // MultiValueMACAddressFilter: compared as MAC addresses, so any case or separator matches.
      mac_address: (values) => {
        const wanted = new Set(values.map((x) => macAddressOf(x) ?? x));
        return (r) => wanted.has(r.mac_address);
      },
      device_id: numbers("device_id", (r, v) => (r.interface != null ? (v.iface(r.interface)?.device ?? null) : null)),
      interface_id: modelIds(
        "interface_id",
        (v) => v.data.interfaces,
        (r) => r.interface,
      ),
      ...updated<MacAddressRecord>(),
    },
    create: createMacAddress,
  }),
];
