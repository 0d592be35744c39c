/**
 * Typed client for the NetBox 4.x REST API, as the netbox agent uses it: read the inventory
 * (sites, racks, devices, interfaces, cables, MAC and IP addresses, clusters, tags, config
 * contexts, the change log) and make a few idempotent writes back.
 *
 * Wire format (NetBox REST API docs, docs/integrations/rest-api.md; shapes in
 * packages/test-support/fixtures/netbox/, with their sources in SOURCES.md there):
 * - Auth: `Authorization: Token <40 hex>` for v1 tokens; NetBox 4.5 adds v2 tokens, shown once
 *   as `nbt_<key>.<secret>` and sent as `Authorization: Bearer nbt_<key>.<secret>`.
 * - Authentication failures are 403, not 401 (DRF takes the WWW-Authenticate header from the
 *   first authentication class, SessionAuthentication, which has none), with a `detail` such
 *   as "Invalid v1 token"; a missing model permission is 403 "You do not have permission to
 *   perform this action." Both surface as NetboxApiError subclasses, told apart by the detail.
 * - Lists are offset-paginated: `{count, next, previous, results}`, `limit` capped by
 *   MAX_PAGE_SIZE (1000 by default). `next` is an absolute URL that NetBox builds from the
 *   Host it sees, which behind a proxy or TLS terminator is often not the address we use; only
 *   its query (filters, limit, offset) is followed, against the configured base URL.
 * - Filters: a repeated parameter is ORed (`?role=a&role=b`). NetBox ignores parameters it does
 *   not know (e.g. `site_id` on MAC or IP addresses), so a misspelt filter returns everything.
 *
 * Objects are parsed with loose zod schemas: fields this client does not name are kept, and
 * fields added after NetBox 4.0 are optional. Reads and the (absolute, so repeatable) PATCHes
 * are retried with exponential backoff and full jitter on connection errors, timeouts, 429 and
 * 5xx; other 4xx throw at once.
 */
import { z } from "zod";
import { SourceUnavailableError, describeFetchError, describeParseError, sendWithRetries } from "../http/http.ts";

export class NetboxApiError extends Error {
  constructor(
    readonly status: number,
    /** The response body as received. */
    readonly body: string,
    message: string,
  ) {
    super(message);
    this.name = "NetboxApiError";
  }
}

/** 403 from a token whose user lacks the model permission (e.g. dcim.view_macaddress). */
export class NetboxPermissionError extends NetboxApiError {
  constructor(
    status: number,
    body: string,
    message: string,
    /** "dcim.macaddress": the object type the path serves. */
    readonly objectType: string,
    readonly path: string,
  ) {
    super(status, body, message);
    this.name = "NetboxPermissionError";
  }
}

/** 403 (or a proxy's 401) because the token is missing, malformed, unknown, expired or disabled. */
export class NetboxAuthenticationError extends NetboxApiError {
  constructor(status: number, body: string, message: string) {
    super(status, body, message);
    this.name = "NetboxAuthenticationError";
  }
}

/** No answer from NetBox (connection refused or reset, DNS, timeout) after every attempt. */
export class NetboxUnavailableError extends SourceUnavailableError {}

/** addDeviceTags was given tags NetBox does not have; it does not create them. */
export class NetboxMissingTagsError extends Error {
  constructor(readonly missing: Array<string | number>) {
    super(
      `NetBox has no tag ${missing.map((t) => (typeof t === "number" ? `#${t}` : `"${t}"`)).join(", ")}: create the tag(s) in NetBox first`,
    );
    this.name = "NetboxMissingTagsError";
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

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
  type: Choice.nullable(),
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

const PageSchema = z.looseObject({
  count: z.number().int().nonnegative(),
  next: z.string().nullable(),
  previous: z.string().nullable().optional(),
  results: z.array(z.unknown()),
});

const DetailSchema = z.looseObject({ detail: z.string() });

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

export type NetboxFilterValue = string | number | boolean | Date;
/** Query filters; an array becomes a repeated parameter, which NetBox ORs. */
export type NetboxFilters = Record<string, NetboxFilterValue | readonly NetboxFilterValue[] | null | undefined>;

export interface NetboxWriteResult<T> {
  /** False when NetBox already had the value: nothing was sent and no change was logged. */
  changed: boolean;
  object: T;
}

export interface NetboxClientOptions {
  /** NetBox's base URL, e.g. https://netbox.example.com (a trailing /api is accepted too). */
  url: string;
  /** A v1 token (40 hex) or a v2 token (nbt_<key>.<secret>). */
  token: string;
  /** Per attempt, including reading the body. */
  timeoutMs?: number;
  /** Attempts for retryable requests, including the first. */
  maxAttempts?: number;
  /** First backoff delay, milliseconds; doubles each attempt, with full jitter. */
  backoffMs?: number;
  /** `limit` asked for; NetBox caps it at MAX_PAGE_SIZE (1000 by default). */
  pageSize?: number;
  fetch?: typeof fetch;
}

interface RequestOptions {
  query?: URLSearchParams;
  body?: unknown;
  /** Safe to send again after a failure that may or may not have reached NetBox. */
  idempotent: boolean;
}

/** Details NetBox (DRF) gives for authentication, as opposed to authorization, failures. */
const AUTHENTICATION_FAILURE =
  /^(Authentication credentials were not provided|Invalid (v[12] )?token|Token expired|Token disabled|User inactive|Invalid token header|Source IP .* is not allowed)/i;

export class NetboxClient {
  readonly url: string;
  private readonly opts: Required<Omit<NetboxClientOptions, "url">>;

  constructor(opts: NetboxClientOptions) {
    const url = opts.url.replace(/\/+$/, "").replace(/\/api$/, "");
    this.url = url;
    this.opts = { timeoutMs: 30_000, maxAttempts: 4, backoffMs: 200, pageSize: 1000, fetch: globalThis.fetch, ...opts };
  }

  /** The Authorization header: v2 tokens (NetBox >= 4.5) use the Bearer keyword, v1 tokens `Token`. */
  get authorization(): string {
    return this.opts.token.startsWith("nbt_") ? `Bearer ${this.opts.token}` : `Token ${this.opts.token}`;
  }

  // -------------------------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------------------------

  /**
   * Every object of a list endpoint ("dcim/devices" or "/api/dcim/devices/"), following `next`
   * to the end. Offset pagination is not a snapshot: an object created or deleted meanwhile
   * shifts later pages, so an object may be seen twice (dropped here, by id) or, when one
   * before it is deleted, missed; callers needing completeness reconcile with the change log.
   */
  async list<S extends z.ZodType>(path: string, schema: S, filters: NetboxFilters = {}): Promise<Array<z.infer<S>>> {
    const out: Array<z.infer<S>> = [];
    for await (const item of this.iterate(path, schema, filters)) out.push(item);
    return out;
  }

  /** list(), one object at a time, a page fetched only once the previous one is consumed. */
  async *iterate<S extends z.ZodType>(
    path: string,
    schema: S,
    filters: NetboxFilters = {},
  ): AsyncGenerator<z.infer<S>> {
    const apiPath = normalizePath(path);
    // An explicit `limit` filter sets the page size; every page is still fetched.
    let query = toQuery({ limit: this.opts.pageSize, ...filters });
    const seenIds = new Set<number>();
    const seenPages = new Set<string>();
    for (;;) {
      seenPages.add(query.toString());
      const { body, status, text } = await this.request("GET", apiPath, PageSchema, { query, idempotent: true });
      for (const raw of body.results) {
        const id =
          typeof raw === "object" && raw !== null && "id" in raw && typeof raw.id === "number" ? raw.id : undefined;
        if (id !== undefined && seenIds.has(id)) continue;
        if (id !== undefined) seenIds.add(id);
        yield parseObject(schema, raw, "GET", apiPath, status, text);
      }
      if (!body.next || body.results.length === 0) return;
      // Only the query of `next` is used: NetBox builds its host from the request it saw.
      const next = new URL(body.next, this.url).searchParams;
      if (seenPages.has(next.toString()))
        throw new NetboxApiError(
          status,
          text,
          `GET ${apiPath}: pagination does not advance (next repeats ${next.toString()})`,
        );
      query = next;
    }
  }

  /** One object by id. */
  async get<S extends z.ZodType>(path: string, id: number, schema: S): Promise<z.infer<S>> {
    const apiPath = `${normalizePath(path)}${id}/`;
    const { body, status, text } = await this.request("GET", apiPath, z.unknown(), { idempotent: true });
    return parseObject(schema, body, "GET", apiPath, status, text);
  }

  devices(filters: NetboxFilters = {}): Promise<NetboxDevice[]> {
    return this.list("dcim/devices", NetboxDeviceSchema, filters);
  }
  device(id: number): Promise<NetboxDevice> {
    return this.get("dcim/devices", id, NetboxDeviceSchema);
  }
  interfaces(filters: NetboxFilters = {}): Promise<NetboxInterface[]> {
    return this.list("dcim/interfaces", NetboxInterfaceSchema, filters);
  }
  interface(id: number): Promise<NetboxInterface> {
    return this.get("dcim/interfaces", id, NetboxInterfaceSchema);
  }
  cables(filters: NetboxFilters = {}): Promise<NetboxCable[]> {
    return this.list("dcim/cables", NetboxCableSchema, filters);
  }
  /** dcim.macaddress objects (NetBox >= 4.2). Filterable by device_id or interface_id, not by site. */
  macAddresses(filters: NetboxFilters = {}): Promise<NetboxMacAddress[]> {
    return this.list("dcim/mac-addresses", NetboxMacAddressSchema, filters);
  }
  /** Filterable by device_id or interface_id, not by site (NetBox ignores site_id here). */
  ipAddresses(filters: NetboxFilters = {}): Promise<NetboxIpAddress[]> {
    return this.list("ipam/ip-addresses", NetboxIpAddressSchema, filters);
  }
  tags(filters: NetboxFilters = {}): Promise<NetboxTag[]> {
    return this.list("extras/tags", NetboxTagSchema, filters);
  }
  sites(filters: NetboxFilters = {}): Promise<NetboxSite[]> {
    return this.list("dcim/sites", NetboxSiteSchema, filters);
  }
  locations(filters: NetboxFilters = {}): Promise<NetboxLocation[]> {
    return this.list("dcim/locations", NetboxLocationSchema, filters);
  }
  racks(filters: NetboxFilters = {}): Promise<NetboxRack[]> {
    return this.list("dcim/racks", NetboxRackSchema, filters);
  }
  deviceTypes(filters: NetboxFilters = {}): Promise<NetboxDeviceType[]> {
    return this.list("dcim/device-types", NetboxDeviceTypeSchema, filters);
  }
  deviceRoles(filters: NetboxFilters = {}): Promise<NetboxDeviceRole[]> {
    return this.list("dcim/device-roles", NetboxDeviceRoleSchema, filters);
  }
  clusters(filters: NetboxFilters = {}): Promise<NetboxCluster[]> {
    return this.list("virtualization/clusters", NetboxClusterSchema, filters);
  }
  configContexts(filters: NetboxFilters = {}): Promise<NetboxConfigContext[]> {
    return this.list("extras/config-contexts", NetboxConfigContextSchema, filters);
  }

  /**
   * Change-log records from `since` on (inclusive), oldest first. NetBox >= 4.1 serves them from
   * core (/api/core/object-changes/). Ascending time keeps offset pagination stable while
   * changes keep arriving: new records land after the last page instead of shifting all pages.
   */
  objectChanges(opts: { since: Date; changedObjectType?: string | string[] }): Promise<NetboxObjectChange[]> {
    return this.list("core/object-changes", NetboxObjectChangeSchema, {
      time_after: opts.since,
      changed_object_type: opts.changedObjectType,
      ordering: "time",
    });
  }

  /** GET /api/status/: NetBox, Django and Python versions, plugins, RQ workers. */
  async status(): Promise<NetboxStatus> {
    const { body, status, text } = await this.request("GET", "/api/status/", z.unknown(), { idempotent: true });
    return parseObject(NetboxStatusSchema, body, "GET", "/api/status/", status, text);
  }

  // -------------------------------------------------------------------------------------------
  // Writes: each reads first and sends nothing when NetBox already has the value, so a repeat
  // neither bumps last_updated nor adds a change record. Read and write are not atomic; the
  // PATCH carries the whole new value, so it may be retried.
  // -------------------------------------------------------------------------------------------

  async setDeviceStatus(id: number, status: string): Promise<NetboxWriteResult<NetboxDevice>> {
    const device = await this.device(id);
    if (device.status.value === status) return { changed: false, object: device };
    return { changed: true, object: await this.patch("dcim/devices", id, NetboxDeviceSchema, { status }) };
  }

  /** Sets the device's `platform_class` custom field (which must be defined in NetBox for dcim.device). */
  async setPlatformClass(id: number, value: string | null): Promise<NetboxWriteResult<NetboxDevice>> {
    const device = await this.device(id);
    // NetBox lists every custom field of the object type (null when unset); when platform_class
    // is not defined the PATCH below fails with NetBox's own 400, which names the field.
    if (device.custom_fields.platform_class === value) return { changed: false, object: device };
    // A PATCH of custom_fields merges into the stored ones: other custom fields are kept.
    return {
      changed: true,
      object: await this.patch("dcim/devices", id, NetboxDeviceSchema, { custom_fields: { platform_class: value } }),
    };
  }

  /** Adds tags (slugs or ids) to the device, keeping its others. The tags must exist in NetBox. */
  async addDeviceTags(id: number, tags: ReadonlyArray<string | number>): Promise<NetboxWriteResult<NetboxDevice>> {
    const slugs = [...new Set(tags.filter((t): t is string => typeof t === "string"))];
    const ids = [...new Set(tags.filter((t): t is number => typeof t === "number"))];
    const [bySlug, byId] = await Promise.all([
      slugs.length ? this.tags({ slug: slugs }) : [],
      ids.length ? this.tags({ id: ids }) : [],
    ]);
    const missing = [
      ...slugs.filter((s) => !bySlug.some((t) => t.slug === s)),
      ...ids.filter((i) => !byId.some((t) => t.id === i)),
    ];
    if (missing.length) throw new NetboxMissingTagsError(missing);
    const device = await this.device(id);
    const current = device.tags.map((t) => t.id);
    const wanted = [...new Set([...bySlug, ...byId].map((t) => t.id))];
    const added = wanted.filter((t) => !current.includes(t));
    if (!added.length) return { changed: false, object: device };
    return {
      changed: true,
      object: await this.patch("dcim/devices", id, NetboxDeviceSchema, { tags: [...current, ...added] }),
    };
  }

  /** Sets an interface's label (used for InfiniBand port GUIDs, which NetBox has no field for). */
  async setInterfaceLabel(id: number, label: string): Promise<NetboxWriteResult<NetboxInterface>> {
    const iface = await this.interface(id);
    if (iface.label === label) return { changed: false, object: iface };
    return { changed: true, object: await this.patch("dcim/interfaces", id, NetboxInterfaceSchema, { label }) };
  }

  private async patch<S extends z.ZodType>(
    path: string,
    id: number,
    schema: S,
    body: Record<string, unknown>,
  ): Promise<z.infer<S>> {
    const apiPath = `${normalizePath(path)}${id}/`;
    const res = await this.request("PATCH", apiPath, z.unknown(), { body, idempotent: true });
    return parseObject(schema, res.body, "PATCH", apiPath, res.status, res.text);
  }

  // -------------------------------------------------------------------------------------------
  // Transport
  // -------------------------------------------------------------------------------------------

  async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S | undefined,
    o: RequestOptions,
  ): Promise<{ body: z.infer<S>; status: number; headers: Headers; text: string }> {
    const url = new URL(this.url + path);
    if (o.query) url.search = o.query.toString();
    const { res, text } = await sendWithRetries({
      url,
      method,
      body: o.body,
      // Django's APPEND_SLASH answers a path without its slash with a 301; follow it for GETs only.
      redirect: method === "GET" ? "follow" : "manual",
      fetch: this.opts.fetch,
      timeoutMs: this.opts.timeoutMs,
      attempts: o.idempotent ? this.opts.maxAttempts : 1,
      backoffMs: this.opts.backoffMs,
      headers: () => ({ accept: "application/json", authorization: this.authorization }),
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        const error = this.toError(res.status, text, method, path, res.statusText);
        return res.status === 429 || res.status >= 500
          ? { kind: "retry", error, afterMs: retryAfterMs(res.headers.get("retry-after")) }
          : { kind: "fail", error };
      },
      unavailable: (cause, n) =>
        new NetboxUnavailableError(
          `${method} ${path}: NetBox at ${this.url} did not answer after ${n} attempt(s): ${describeFetchError(cause)}`,
          n,
          { cause },
        ),
    });
    let body: unknown;
    if (schema) {
      try {
        body = schema.parse(text ? JSON.parse(text) : undefined);
      } catch (err) {
        throw new NetboxApiError(
          res.status,
          text,
          `${method} ${path} -> ${res.status} with an unexpected body: ${describeParseError(err)}`,
        );
      }
    }
    return { body: body as z.infer<S>, status: res.status, headers: res.headers, text };
  }

  private toError(status: number, text: string, method: string, path: string, statusText: string): NetboxApiError {
    const detail = netboxErrorMessage(text) ?? statusText;
    const pathOnly = path.replace(/\?.*$/, "");
    if (status === 401 || (status === 403 && AUTHENTICATION_FAILURE.test(detail))) {
      const scheme = this.opts.token.startsWith("nbt_") ? "a v2 token (Bearer nbt_...)" : "a v1 token (Token ...)";
      return new NetboxAuthenticationError(
        status,
        text,
        `${method} ${pathOnly} -> ${status} ${detail} (NetBox at ${this.url} rejected ${scheme})`,
      );
    }
    if (status === 403) {
      const objectType = objectTypeForPath(pathOnly);
      const [app, model] = objectType.split(".");
      return new NetboxPermissionError(
        status,
        text,
        `${method} ${pathOnly} -> 403 ${detail} (the token's user needs the ${app}.${method === "GET" ? "view" : "change"}_${model} permission on ${objectType})`,
        objectType,
        pathOnly,
      );
    }
    return new NetboxApiError(status, text, `${method} ${pathOnly} -> ${status} ${detail}`);
  }
}

/** "dcim/devices", "/api/dcim/devices/" -> "/api/dcim/devices/". */
function normalizePath(path: string): string {
  const bare = path
    .replace(/^\/+/, "")
    .replace(/^api\//, "")
    .replace(/\/+$/, "");
  return `/api/${bare}/`;
}

/** Model names of list endpoints whose name is not simply the plural without "s"/"es". */
const OBJECT_TYPE_EXCEPTIONS: Record<string, string> = {
  "core/object-changes": "core.objectchange",
  "extras/config-contexts": "extras.configcontext",
};

/** "/api/dcim/mac-addresses/12/" -> "dcim.macaddress", as NetBox names object types (app_label.model). */
export function objectTypeForPath(path: string): string {
  const m = /^\/?(?:api\/)?([a-z-]+)\/([a-z-]+)/.exec(path.replace(/^\/+/, ""));
  if (!m) return path;
  const [, app, plural] = m as unknown as [string, string, string];
  const exception = OBJECT_TYPE_EXCEPTIONS[`${app}/${plural}`];
  if (exception) return exception;
  const singular = plural.endsWith("sses") ? plural.slice(0, -2) : plural.endsWith("s") ? plural.slice(0, -1) : plural;
  return `${app}.${singular.replace(/-/g, "")}`;
}

function toQuery(filters: NetboxFilters): URLSearchParams {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value])
      q.append(key, v instanceof Date ? v.toISOString() : String(v));
  }
  return q;
}

function parseObject<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  method: string,
  path: string,
  status: number,
  text: string,
): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const id = typeof raw === "object" && raw !== null && "id" in raw ? String(raw.id) : "?";
  throw new NetboxApiError(
    status,
    text,
    `${method} ${path}: unexpected object ${id}: ${describeParseError(parsed.error)}`,
  );
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  // Bounded: a far-off Retry-After is better handled by the caller's next run than by sleeping.
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 30) * 1000 : undefined;
}

/**
 * The readable part of a NetBox error body: DRF's `{"detail": "..."}`, or a validation error
 * `{"field": ["message", ...]}` (filters and writes), or NetBox's 500 page
 * `{"error": "...", "exception": "..."}`.
 */
export function netboxErrorMessage(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 300) || undefined;
  }
  const detail = DetailSchema.safeParse(doc);
  if (detail.success) return detail.data.detail;
  if (doc && typeof doc === "object" && !Array.isArray(doc)) {
    const o = doc as Record<string, unknown>;
    if (typeof o.error === "string") return typeof o.exception === "string" ? `${o.exception}: ${o.error}` : o.error;
    const parts = Object.entries(o).map(
      ([k, v]) =>
        `${k}: ${Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(" ") : JSON.stringify(v)}`,
    );
    if (parts.length) return parts.join("; ");
  }
  return text.trim().slice(0, 300) || undefined;
}
