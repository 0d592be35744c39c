/**
 * DCIM sites, locations and racks. Full representations: SOURCES.md S1 `Site.md`,
 * `Location.md` (`_depth` S2 `sites.py`), `Rack.md` (fixtures site.json, location.json,
 * rack.json).
 */
import { RACK_STATUS, SITE_STATUS, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { exact, modelIds, numbers, choices, sitesOf, updated } from "./filters.ts";
import { briefLocation, briefSite, customFields, nestedTags } from "./nested.ts";
import type { LocationRecord, RackRecord, SiteRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

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

export const siteEndpoints: Array<Endpoint<{ id: number }>> = [
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
];
