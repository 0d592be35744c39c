/**
 * Core: the change log. Every write bumps `last_updated` and records a core.objectchange, served
 * at /api/core/object-changes/ (NetBox >= 4.1; SOURCES.md S8). Full representation: S1
 * `ObjectChange.md`, S2 `change_logging.py`; `display` is ObjectChange.__str__ (fixture
 * object-change.json). The store keeps prechange/postchange data in the flat serialize_object()
 * form (foreign keys as ids, tags as sorted names), null where NetBox stores none; the API
 * renders `prechange_data_clean`/`postchange_data_clean` (S13): `{}` for none, without
 * `created`, `last_updated` and keys starting with `_`.
 */
import { randomUUID } from "node:crypto";
import { ACTION, choice } from "./choices.ts";
import { endpoint, type Endpoint } from "./endpoint.ts";
import { choices, dateTime, exact, numbers, type Filter } from "./filters.ts";
import { atLeast } from "./status.ts";
import { briefDevice, briefInterface } from "./nested.ts";
import type { CableRecord, DeviceRecord, InterfaceRecord, NetboxData, ObjectChangeRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

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
    prechange_data: cleanData(c.prechange_data),
    postchange_data: cleanData(c.postchange_data),
  };
}

/** ObjectChange.get_clean_data(): none as `{}`, change-tracking fields and `_` keys dropped. */
function cleanData(data: Record<string, unknown> | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data ?? {}))
    if (k !== "created" && k !== "last_updated" && !k.startsWith("_")) out[k] = v;
  return out;
}

/**
 * `changed_object_type`: a ContentTypeFilter from NetBox 4.1.0 to 4.5.2, which reads one value
 * (django-filter takes QueryDict.get(), the last of a repeated parameter); a
 * MultiValueContentTypeFilter, ORing every value, since 4.5.3 (S14). A value naming no type
 * matches nothing.
 */
const changedObjectType: Filter<ObjectChangeRecord> = (values, v) => {
  const wanted = new Set(atLeast(v.release, "4.5.3") ? values : values.slice(-1));
  return (r) => wanted.has(r.changed_object_type);
};

/** utilities.serialization.serialize_object(): model fields with foreign keys as ids, tags as sorted names. */
export function serializeObject(
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
    const atA = (c: CableRecord) => !c.a_type && c.a.includes(rec.id);
    const link = data.cables.find((c) => atA(c) || (!c.b_type && c.b.includes(rec.id)));
    flat.cable = link ? link.id : null;
    flat.cable_end = link ? (atA(link) ? "A" : "B") : "";
  }
  return { ...flat, custom_fields: { ...(custom_fields as object) }, tags: tagNames };
}

/** Appends a change record as NetBox logs it: the next id, by the token's user. */
export function recordChange(
  data: NetboxData,
  change: Pick<
    ObjectChangeRecord,
    | "time"
    | "action"
    | "changed_object_type"
    | "changed_object_id"
    | "object_repr"
    | "prechange_data"
    | "postchange_data"
  > & { request_id?: string },
): void {
  data.objectChanges.push({
    id: (data.objectChanges.at(-1)?.id ?? 0) + 1,
    time: change.time,
    user_name: data.user.username,
    request_id: change.request_id ?? randomUUID(),
    action: change.action,
    changed_object_type: change.changed_object_type,
    changed_object_id: change.changed_object_id,
    object_repr: change.object_repr,
    message: "",
    prechange_data: change.prechange_data,
    postchange_data: change.postchange_data,
  });
}

export const coreEndpoints: Array<Endpoint<{ id: number }>> = [
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
      changed_object_type: changedObjectType,
      changed_object_id: numbers("changed_object_id", (r) => r.changed_object_id),
      action: choices("action", ACTION, (r) => r.action),
      request_id: exact((r) => r.request_id),
      user_name: exact((r) => r.user_name),
    },
  }),
];
