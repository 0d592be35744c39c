/**
 * DCIM cables. Full representation: SOURCES.md S1 `Cable.md` (4.5 adds `profile`); terminations
 * are S3 `GenericObject.md` (`object_type`, `object_id`, `object`) (fixture cable.json). Ends are
 * interfaces, or patch-panel front and rear ports (paths.ts).
 */
import { CABLE_STATUS, LENGTH_UNIT, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { choices, numbers, updated } from "./filters.ts";
import { cableDisplay, customFields, nestedTags } from "./nested.ts";
import { deviceOf, termination, type Termination } from "./paths.ts";
import type { CableRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

const ends = (c: CableRecord, end: "A" | "B"): Termination[] =>
  (end === "A" ? c.a : c.b).map((id) => ({ type: (end === "A" ? c.a_type : c.b_type) ?? "dcim.interface", id }));

function genericObject(v: View, t: Termination): Json {
  return { object_type: t.type, object_id: t.id, object: termination(v, t) };
}

function renderCable(v: View, c: CableRecord): Json {
  return {
    id: c.id,
    url: v.api(`dcim/cables/${c.id}/`),
    display_url: v.ui(`dcim/cables/${c.id}/`),
    display: cableDisplay(c),
    // Not a declared serializer field: DRF's ModelSerializer maps the model's CharField with
    // choices to its own ChoiceField, which renders the bare value (S18).
    type: c.type,
    a_terminations: ends(c, "A").map((t) => genericObject(v, t)),
    b_terminations: ends(c, "B").map((t) => genericObject(v, t)),
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
      device_id: numbers("device_id", (r, v) => [...ends(r, "A"), ...ends(r, "B")].map((t) => deviceOf(v, t) ?? -1)),
      site_id: numbers("site_id", (r, v) =>
        [...ends(r, "A"), ...ends(r, "B")].map((t) => v.device(deviceOf(v, t) ?? -1)?.site ?? -1),
      ),
      status: choices("status", CABLE_STATUS, (r) => r.status),
      ...updated<CableRecord>(),
    },
  }),
];
