/**
 * DCIM cables. Full representation: SOURCES.md S1 `Cable.md` (4.5 adds `profile`); terminations
 * are S3 `GenericObject.md` (`object_type`, `object_id`, `object`) (fixture cable.json). Ends are
 * interfaces, or patch-panel front and rear ports (paths.ts).
 */
import { CABLE_STATUS, LENGTH_UNIT, choice } from "./choices.ts";
import { NOT_WRITABLE, endpoint, isPlainObject, type Endpoint } from "./endpoint.ts";
import { choices, numbers, updated } from "./filters.ts";
import { cableDisplay, customFields, nestedTags } from "./nested.ts";
import { deviceOf, termination, type Termination } from "./paths.ts";
import type { CableRecord, InterfaceRecord } from "./store.ts";
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

/**
 * POST /api/dcim/cables/ (SOURCES.md S19): `a_terminations` and `b_terminations` as generic
 * objects (`{object_type, object_id}`), here interfaces only; `status`, `type`, `label`, `color`,
 * `length`, `length_unit`, `description`. Refused as `Cable.clean()` and `CableTermination.clean()`
 * refuse: an end missing, both ends on one object, an interface another cable holds or marked
 * connected.
 */
function createCable(
  v: View,
  body: Record<string, unknown>,
  at: string,
): { record: CableRecord } | { errors: Record<string, string[]> } {
  const allowed = [
    "a_terminations",
    "b_terminations",
    "status",
    "type",
    "label",
    "color",
    "length",
    "length_unit",
    "description",
  ];
  const unsupported = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unsupported.length) return { errors: NOT_WRITABLE("dcim.cable", unsupported) };
  const ends: Record<"a_terminations" | "b_terminations", InterfaceRecord[]> = {
    a_terminations: [],
    b_terminations: [],
  };
  for (const key of ["a_terminations", "b_terminations"] as const) {
    const raw = body[key] ?? [];
    if (!Array.isArray(raw)) return { errors: { [key]: ['Expected a list of items but got type "dict".'] } };
    for (const t of raw) {
      if (!isPlainObject(t) || t.object_type !== "dcim.interface")
        return { errors: NOT_WRITABLE("dcim.cable", [`${key} of a type other than dcim.interface`]) };
      const iface = v.iface(Number(t.object_id));
      if (!iface)
        return {
          errors: { [key]: [`Related object not found using the provided numeric ID: ${String(t.object_id)}`] },
        };
      ends[key].push(iface);
    }
  }
  const { a_terminations: a, b_terminations: b } = ends;
  if (!a.length || !b.length)
    return { errors: { __all__: ["Must define A and B terminations when creating a new cable."] } };
  if (a.some((x) => b.some((y) => y.id === x.id)))
    return { errors: { __all__: ["A and B terminations cannot connect to the same object."] } };
  for (const i of [...a, ...b]) {
    if (i.mark_connected) {
      const d = v.device(i.device);
      return {
        errors: {
          __all__: [`Cannot connect a cable to ${d?.name ?? i.device} > ${i.name} because it is marked as connected.`],
        },
      };
    }
    const held = v.data.cables.find((c) => (!c.a_type && c.a.includes(i.id)) || (!c.b_type && c.b.includes(i.id)));
    if (held)
      return { errors: { __all__: [`Duplicate termination found for dcim.interface ${i.id}: cable ${held.id}`] } };
  }
  const status = body.status ?? "connected";
  if (typeof status !== "string" || !(status in CABLE_STATUS))
    return { errors: { status: [`"${String(status)}" is not a valid choice.`] } };
  const str = (k: string) => (typeof body[k] === "string" ? body[k] : "");
  const record: CableRecord = {
    id: Math.max(0, ...v.data.cables.map((c) => c.id)) + 1,
    type: typeof body.type === "string" && body.type ? body.type : null,
    a: a.map((i) => i.id),
    b: b.map((i) => i.id),
    status,
    label: str("label"),
    color: str("color"),
    length: typeof body.length === "number" ? body.length : null,
    length_unit: typeof body.length_unit === "string" && body.length_unit ? body.length_unit : null,
    description: str("description"),
    tags: [],
    custom_fields: {},
    created: at,
    last_updated: at,
  };
  if (record.length !== null && !record.length_unit)
    return { errors: { __all__: ["Must specify a unit when setting a cable length"] } };
  v.data.cables.push(record);
  return { record };
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
    create: createCable,
    // Deleting a cable deletes its terminations with it; the interfaces stay.
    remove: (data, row) => {
      data.cables = data.cables.filter((c) => c.id !== row.id);
    },
  }),
];
