/**
 * DCIM cables. Full representation: SOURCES.md S1 `Cable.md` (4.5 adds `profile`); terminations
 * are S3 `GenericObject.md` (`object_type`, `object_id`, `object`) (fixture cable.json). Only
 * interface-to-interface cables are modelled.
 */
import { CABLE_STATUS, CABLE_TYPE, LENGTH_UNIT, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { choices, numbers, updated } from "./filters.ts";
import { briefInterface, cableDisplay, customFields, nestedTags } from "./nested.ts";
import type { CableRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

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

export const cableEndpoints: Array<Endpoint<{ id: number }>> = [
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
];
