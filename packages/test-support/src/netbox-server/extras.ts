/**
 * Extras: tags, config contexts, and a device's rendered config context. Full representations:
 * SOURCES.md S1 `Tag.md` (nested tags elsewhere: S3 `NestedTag.md`), `ConfigContext.md` (its
 * `tags` is a list of slugs) (fixtures tag.json, config-context.json). Custom fields are
 * rendered with each object (nested.ts).
 */
import { endpoint, isPlainObject, type Endpoint } from "./endpoint.ts";
import { exact, modelIds, numbers, sitesOf, updated } from "./filters.ts";
import { briefCluster, briefDeviceType, briefRole, briefSite } from "./nested.ts";
import type { ConfigContextRecord, DeviceRecord, NetboxData, TagRecord } from "./store.ts";
import type { Json, View } from "./view.ts";

function renderTag(v: View, t: TagRecord): Json {
  const tagged = v.tagged().get(t.id) ?? 0;
  return {
    id: t.id,
    url: v.api(`extras/tags/${t.id}/`),
    display_url: v.ui(`extras/tags/${t.id}/`),
    display: t.name,
    name: t.name,
    slug: t.slug,
    color: t.color,
    description: t.description,
    weight: t.weight,
    object_types: [],
    tagged_items: tagged,
    created: t.created,
    last_updated: t.last_updated,
  };
}

/** The device's rendered config context: matching active contexts by weight, then name, deep-merged; local data last. */
export function renderConfigContext(data: NetboxData, d: DeviceRecord): Record<string, unknown> {
  const matches = (ids: number[], id: number | null) => ids.length === 0 || (id != null && ids.includes(id));
  const contexts = data.configContexts
    .filter(
      (c) =>
        c.is_active &&
        matches(c.sites, d.site) &&
        matches(c.roles, d.role) &&
        matches(c.device_types, d.device_type) &&
        matches(c.clusters, d.cluster),
    )
    .sort((a, b) => a.weight - b.weight || a.name.localeCompare(b.name));
  let out: Record<string, unknown> = {};
  for (const c of contexts) out = deepMerge(out, c.data);
  if (d.local_context_data) out = deepMerge(out, d.local_context_data);
  return out;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isPlainObject(prev) && isPlainObject(v) ? deepMerge(prev, v) : structuredClone(v);
  }
  return out;
}

function renderConfigContextObject(v: View, c: ConfigContextRecord): Json {
  const list = <T>(ids: number[], get: (id: number) => T | undefined, brief: (v: View, x: T) => Json) =>
    ids
      .map(get)
      .filter((x): x is T => x !== undefined)
      .map((x) => brief(v, x));
  return {
    id: c.id,
    url: v.api(`extras/config-contexts/${c.id}/`),
    display_url: v.ui(`extras/config-contexts/${c.id}/`),
    display: c.name,
    name: c.name,
    weight: c.weight,
    profile: null,
    description: c.description,
    is_active: c.is_active,
    regions: [],
    site_groups: [],
    sites: list(c.sites, (id) => v.site(id), briefSite),
    locations: [],
    device_types: list(c.device_types, (id) => v.deviceType(id), briefDeviceType),
    roles: list(c.roles, (id) => v.role(id), briefRole),
    platforms: [],
    cluster_types: [],
    cluster_groups: [],
    clusters: list(c.clusters, (id) => v.cluster(id), briefCluster),
    tenant_groups: [],
    tenants: [],
    owner: null,
    tags: [],
    data_source: null,
    data_path: "",
    data_file: null,
    data_synced: null,
    data: c.data,
    created: c.created,
    last_updated: c.last_updated,
  };
}

/** The tags of a PATCH body (ids or attribute dictionaries), as NetBox resolves nested related objects. */
export function patchTags(v: View, raw: unknown): { ids: number[] } | { error: string[] } {
  if (!Array.isArray(raw)) return { error: [`Expected a list of items but got type "${typeof raw}".`] };
  const ids: number[] = [];
  for (const item of raw) {
    let tag: TagRecord | undefined;
    if (typeof item === "number") {
      tag = v.tag(item);
      if (!tag) return { error: [`Related object not found using the provided numeric ID: ${item}`] };
    } else if (isPlainObject(item)) {
      tag = v.data.tags.find((t) =>
        Object.entries(item).every(([k, val]) => (t as unknown as Record<string, unknown>)[k] === val),
      );
      if (!tag) {
        const attrs = Object.entries(item)
          .map(([k, val]) => `'${k}': ${typeof val === "string" ? `'${val}'` : String(val)}`)
          .join(", ");
        return { error: [`Related object not found using the provided attributes: {${attrs}}`] };
      }
    } else {
      return {
        error: [
          `Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: ${JSON.stringify(item)}`,
        ],
      };
    }
    if (!ids.includes(tag.id)) ids.push(tag.id);
  }
  return { ids };
}

export const extrasEndpoints: Array<Endpoint<{ id: number }>> = [
  endpoint<TagRecord>({
    path: "extras/tags",
    objectType: "extras.tag",
    objectName: "Tag",
    rows: (d) => d.tags,
    render: renderTag,
    filters: {
      id: numbers("id", (r) => r.id),
      slug: exact((r) => r.slug),
      name: exact((r) => r.name),
      ...updated<TagRecord>(),
    },
  }),
  endpoint<ConfigContextRecord>({
    path: "extras/config-contexts",
    objectType: "extras.configcontext",
    objectName: "ConfigContext",
    rows: (d) => d.configContexts,
    render: renderConfigContextObject,
    filters: {
      id: numbers("id", (r) => r.id),
      name: exact((r) => r.name),
      is_active: exact((r) => (r.is_active ? "true" : "false")),
      site_id: modelIds("site_id", sitesOf, (r) => r.sites),
      role_id: modelIds(
        "role_id",
        (v) => v.data.deviceRoles,
        (r) => r.roles,
      ),
      device_type_id: modelIds(
        "device_type_id",
        (v) => v.data.deviceTypes,
        (r) => r.device_types,
      ),
      cluster_id: modelIds(
        "cluster_id",
        (v) => v.data.clusters,
        (r) => r.clusters,
      ),
      ...updated<ConfigContextRecord>(),
    },
  }),
];
