/** IPAM IP addresses. Full representation: SOURCES.md S1 `IPAddress.md`; `family` S4 (fixture ip-address.json). */
import { IP_STATUS, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { choices, exact, modelIds, numbers, updated } from "./filters.ts";
import { briefInterface, customFields, family, nestedTags } from "./nested.ts";
import type { IpAddressRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

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

export const ipamEndpoints: Array<Endpoint<{ id: number }>> = [
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
];
