/**
 * Typed client for the NetBox 4.x REST API, as the netbox agent uses it: read the inventory
 * (sites, racks, devices, interfaces, cables, MAC and IP addresses, clusters, tags, config
 * contexts, the change log) and make a few idempotent writes back.
 *
 * Wire format (NetBox REST API docs, docs/integrations/rest-api.md; shapes in
 * packages/test-support/fixtures/netbox/, with their sources in SOURCES.md there):
 * - Auth: `Authorization: Token <40 hex>` for v1 tokens; NetBox 4.5 adds v2 tokens, shown once
 *   as `nbt_<key>.<secret>` and sent as `Authorization: Bearer nbt_<key>.<secret>`.
 * - Authentication failures are 403, not 401 (errors.ts).
 * - Lists are offset-paginated: `{count, next, previous, results}`, `limit` capped by
 *   MAX_PAGE_SIZE (1000 by default). `next` is an absolute URL that NetBox builds from the
 *   Host it sees, which behind a proxy or TLS terminator is often not the address we use; only
 *   its query (filters, limit, offset) is followed, against the configured base URL.
 * - Filters: a repeated parameter is ORed (`?role=a&role=b`). NetBox ignores parameters it does
 *   not know (e.g. `site_id` on MAC or IP addresses), so a misspelt filter returns everything.
 *
 * Objects are parsed with loose zod schemas: fields this client does not name are kept, and
 * fields added after NetBox 4.0 are optional. Reads and the (absolute, so repeatable) PATCHes
 * are retried with exponential backoff and equal jitter on connection errors, timeouts, 429 and
 * 5xx; other 4xx throw at once.
 */
import { z } from "zod";
import { describeParseError, isOutage, noAnswer, parseBody, retryAfterMs, sendWithRetries } from "../http/http.ts";
import { NetboxApiError, NetboxUnavailableError, netboxError } from "./errors.ts";
import { netboxReleaseAtLeast } from "./release.ts";
import {
  NetboxCableSchema,
  NetboxClusterSchema,
  NetboxConfigContextSchema,
  NetboxDeviceRoleSchema,
  NetboxDeviceSchema,
  NetboxDeviceTypeSchema,
  NetboxInterfaceSchema,
  NetboxIpAddressSchema,
  NetboxLocationSchema,
  NetboxMacAddressSchema,
  NetboxObjectChangeSchema,
  NetboxRackSchema,
  NetboxSiteSchema,
  NetboxStatusSchema,
  NetboxTagSchema,
  type NetboxCable,
  type NetboxCluster,
  type NetboxConfigContext,
  type NetboxDevice,
  type NetboxDeviceRole,
  type NetboxDeviceType,
  type NetboxInterface,
  type NetboxIpAddress,
  type NetboxLocation,
  type NetboxMacAddress,
  type NetboxObjectChange,
  type NetboxRack,
  type NetboxSite,
  type NetboxStatus,
  type NetboxTag,
} from "./schemas.ts";
import {
  addDeviceTags,
  setDeviceStatus,
  setInterfaceLabel,
  setPlatformClass,
  type NetboxWriteResult,
} from "./writes.ts";

/** A list page (LimitOffsetPagination). */
const PageSchema = z.looseObject({
  count: z.number().int().nonnegative(),
  next: z.string().nullable(),
  previous: z.string().nullable().optional(),
  results: z.array(z.unknown()),
});

export type NetboxFilterValue = string | number | boolean | Date;
/** Query filters; an array becomes a repeated parameter, which NetBox ORs. */
export type NetboxFilters = Record<string, NetboxFilterValue | readonly NetboxFilterValue[] | null | undefined>;

export interface NetboxClientOptions {
  /** NetBox's base URL, e.g. https://netbox.example.com (a trailing /api is accepted too). */
  url: string;
  /** A v1 token (40 hex) or a v2 token (nbt_<key>.<secret>). */
  token: string;
  /** Per attempt, including reading the body. */
  timeoutMs?: number;
  /** Attempts for retryable requests, including the first. */
  maxAttempts?: number;
  /** First backoff delay, milliseconds; doubles each attempt, with equal jitter (backoffDelay). */
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

export class NetboxClient {
  readonly url: string;
  private readonly opts: Required<Omit<NetboxClientOptions, "url">>;
  private releaseOnce: Promise<string> | undefined;

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
   * Change-log records from `since` on (inclusive), oldest first, of the given object types
   * ("dcim.device") or of all. NetBox >= 4.1 serves them from core (/api/core/object-changes/).
   * Ascending time keeps offset pagination stable while changes keep arriving: new records land
   * after the last page instead of shifting all pages.
   *
   * `changed_object_type` takes one value from NetBox 4.1.0 to 4.5.2 (the last of a repeated
   * parameter; several since 4.5.3): asked for several types, an older NetBox is asked for all
   * changes and the types are filtered here, so none is silently left out.
   */
  async objectChanges(opts: { since: Date; changedObjectType?: string | string[] }): Promise<NetboxObjectChange[]> {
    const types = opts.changedObjectType === undefined ? undefined : [opts.changedObjectType].flat();
    const filterHere = types !== undefined && types.length > 1 && !netboxReleaseAtLeast(await this.release(), "4.5.3");
    const changes = await this.list("core/object-changes", NetboxObjectChangeSchema, {
      time_after: opts.since,
      changed_object_type: filterHere ? undefined : types,
      ordering: "time",
    });
    return filterHere ? changes.filter((c) => types.includes(c.changed_object_type)) : changes;
  }

  /** GET /api/status/: NetBox, Django and Python versions, plugins, RQ workers. */
  async status(): Promise<NetboxStatus> {
    const { body, status, text } = await this.request("GET", "/api/status/", z.unknown(), { idempotent: true });
    return parseObject(NetboxStatusSchema, body, "GET", "/api/status/", status, text);
  }

  /** NetBox's release ("4.5.0"), read from /api/status/ once per client (again after a failure). */
  release(): Promise<string> {
    this.releaseOnce ??= this.status().then(
      (s) => s["netbox-version"],
      (err: unknown) => {
        this.releaseOnce = undefined;
        throw err;
      },
    );
    return this.releaseOnce;
  }

  /**
   * The first page of a list, `limit` objects at most, and the list's total: one request, for
   * probes (does the token may view this, is there anything) that must not walk every page.
   */
  async firstPage<S extends z.ZodType>(
    path: string,
    schema: S,
    filters: NetboxFilters = {},
    limit = 1,
  ): Promise<{ count: number; results: Array<z.infer<S>> }> {
    const apiPath = normalizePath(path);
    const query = toQuery({ ...filters, limit });
    const { body, status, text } = await this.request("GET", apiPath, PageSchema, { query, idempotent: true });
    return {
      count: body.count,
      results: body.results.map((raw) => parseObject(schema, raw, "GET", apiPath, status, text)),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Writes (writes.ts): each reads first and sends nothing when NetBox already has the value.
  // -------------------------------------------------------------------------------------------

  setDeviceStatus(id: number, status: string): Promise<NetboxWriteResult<NetboxDevice>> {
    return setDeviceStatus(this, id, status);
  }

  /** Sets the device's `platform_class` custom field (which must be defined in NetBox for dcim.device). */
  setPlatformClass(id: number, value: string | null): Promise<NetboxWriteResult<NetboxDevice>> {
    return setPlatformClass(this, id, value);
  }

  /** Adds tags (slugs or ids) to the device, keeping its others. The tags must exist in NetBox. */
  addDeviceTags(id: number, tags: ReadonlyArray<string | number>): Promise<NetboxWriteResult<NetboxDevice>> {
    return addDeviceTags(this, id, tags);
  }

  /** Sets an interface's label (used for InfiniBand port GUIDs, which NetBox has no field for). */
  setInterfaceLabel(id: number, label: string): Promise<NetboxWriteResult<NetboxInterface>> {
    return setInterfaceLabel(this, id, label);
  }

  /** PATCHes one object. The body carries absolute values, so a repeat is harmless and it is retried. */
  async patch<S extends z.ZodType>(
    path: string,
    id: number,
    schema: S,
    body: Record<string, unknown>,
  ): Promise<z.infer<S>> {
    const apiPath = `${normalizePath(path)}${id}/`;
    const res = await this.request("PATCH", apiPath, z.unknown(), { body, idempotent: true });
    return parseObject(schema, res.body, "PATCH", apiPath, res.status, res.text);
  }

  /**
   * POSTs one new object (201). Sent once: a repeat would create a second object, so callers
   * look before they create and a retry of theirs looks again.
   */
  async create<S extends z.ZodType>(path: string, schema: S, body: Record<string, unknown>): Promise<z.infer<S>> {
    const apiPath = normalizePath(path);
    const res = await this.request("POST", apiPath, z.unknown(), { body, idempotent: false });
    return parseObject(schema, res.body, "POST", apiPath, res.status, res.text);
  }

  /** DELETEs one object (204); one already gone (404) counts as deleted, so a retry is harmless. */
  async delete(path: string, id: number): Promise<void> {
    try {
      await this.request("DELETE", `${normalizePath(path)}${id}/`, undefined, { idempotent: true });
    } catch (err) {
      if (err instanceof NetboxApiError && err.status === 404) return;
      throw err;
    }
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
        const error = netboxError(
          { status: res.status, text, statusText: res.statusText },
          { method, path },
          { url: this.url, token: this.opts.token },
        );
        return isOutage(res.status, "netbox")
          ? { kind: "retry", error, afterMs: retryAfterMs(res.headers.get("retry-after")) }
          : { kind: "fail", error };
      },
      unavailable: (cause, n) =>
        new NetboxUnavailableError(noAnswer(`${method} ${path}`, `NetBox at ${this.url}`, n, cause), n, { cause }),
    });
    const parsed = schema ? parseBody(schema, text) : { ok: true as const, value: undefined };
    if (!parsed.ok)
      throw new NetboxApiError(
        res.status,
        text,
        `${method} ${path} -> ${res.status} with an unexpected body: ${parsed.problem}`,
      );
    return { body: parsed.value as z.infer<S>, status: res.status, headers: res.headers, text };
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
