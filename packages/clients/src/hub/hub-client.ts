/**
 * Typed client for the hub API, shared by the CLI, the agents and the tests. Responses are
 * parsed with the domain's zod schemas; errors surface as HubApiError carrying the problem
 * document, or HubUnavailableError when the hub did not answer.
 *
 * Requests go through the retry loop every client shares (http.ts), with the hub's rules:
 * - Repeatable requests (GET, PUT, DELETE, a POST or PATCH with an Idempotency-Key, whose key is
 *   sent again with every attempt, and the POSTs the hub makes idempotent) are retried with
 *   exponential backoff and equal jitter on connection errors, 429 and 5xx, waiting at least what
 *   Retry-After asks. Other POSTs and PATCHes are sent once: a repeat could act twice.
 * - Another 4xx is the hub's answer, never retried.
 * - A 401 calls `onUnauthorized` and the request is sent once more with a fresh token (whatever
 *   the method: the hub did not act on it).
 */
import type { z } from "zod";
import {
  DeviceListSchema,
  DeviceSchema,
  DiscrepancyListSchema,
  FEED_CURSOR_EXPIRED,
  FeedPageSchema,
  type FeedPage,
  DiscrepancySummarySchema,
  type Discrepancy,
  type DiscrepancyKind,
  type DiscrepancyList,
  type DiscrepancySummary,
  NetboxSettingsSchema,
  type NetboxReflectionSite,
  type NetboxSettings,
  JobListSchema,
  JobSchema,
  type Job,
  type JobCreateInput,
  type JobKind,
  type JobList,
  type JobReport,
  type JobSignalCreate,
  type JobStatus,
  DeviceRoleListSchema,
  ProblemSchema,
  INVENTORY_SNAPSHOT_PATH,
  type InventorySnapshotLine,
  ReflectionResultSchema,
  SiteListSchema,
  SiteSchema,
  SlurmBootstrapConfigListSchema,
  type SlurmBootstrapConfig,
  type AgentKind,
  type Device,
  type DeviceList,
  type DeviceRole,
  type Problem,
  type ReflectionResult,
  type ReflectionSource,
  type Site,
  type SiteCreate,
  type SiteList,
  type SitePatch,
} from "@fm/domain";
import {
  SourceApiError,
  SourceUnavailableError,
  isOutage,
  noAnswer,
  retryAfterMs,
  sendWithRetries,
} from "../http/http.ts";
import { readSnapshotStream } from "./feed-stream.ts";

export { SnapshotTruncatedError } from "./feed-stream.ts";

export class HubApiError extends SourceApiError {
  constructor(
    status: number,
    readonly problem: Problem | undefined,
    message: string,
  ) {
    super("hub", status, message);
    this.name = "HubApiError";
  }
  get code(): string | undefined {
    return this.problem?.code;
  }
}

/**
 * The feed no longer keeps the events after the cursor (410 feed_cursor_expired): read the
 * snapshot (`readSnapshot`) and continue the feed from its position.
 */
export class FeedCursorExpiredError extends HubApiError {
  constructor(from: HubApiError) {
    super(from.status, from.problem, from.message);
    this.name = "FeedCursorExpiredError";
  }
}

/** No answer from the hub (connection refused or reset, DNS, timeout) after every attempt. */
export class HubUnavailableError extends SourceUnavailableError {}

export interface HubClientOptions {
  baseUrl: string;
  /** Returns a bearer token (cached and refreshed by the caller), or undefined for none. */
  token?: () => Promise<string | undefined>;
  /** Attempts for retryable requests, including the first. */
  maxAttempts?: number;
  /** First backoff delay, milliseconds; doubles each attempt, with equal jitter (backoffDelay). */
  backoffMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /**
   * Called when the hub answers 401 (token expired early, key rotated, secret rotated): the
   * caller drops its cached token and the request is sent once more with a fresh one.
   */
  onUnauthorized?: () => void;
  /** How to wait between attempts (by default, a timer); tests pass one that records the delays. */
  sleep?: (ms: number) => Promise<unknown>;
}

interface RequestOptions {
  /** An array value is sent as the parameter repeated (`?site=a&site=b`). */
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Retry even though the method is POST/PATCH: the caller knows a repeat is harmless. */
  retry?: boolean;
  /** Per-attempt timeout when it must exceed the client's (a long-poll). */
  timeoutMs?: number;
}

export class HubClient {
  private readonly opts: Required<Omit<HubClientOptions, "token" | "onUnauthorized" | "sleep">> &
    Pick<HubClientOptions, "token" | "onUnauthorized" | "sleep">;

  constructor(opts: HubClientOptions) {
    this.opts = {
      maxAttempts: 5,
      backoffMs: 200,
      timeoutMs: 30_000,
      fetch: globalThis.fetch,
      ...opts,
      baseUrl: opts.baseUrl.replace(/\/+$/, ""),
    };
  }

  async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S | undefined,
    o: RequestOptions = {},
  ): Promise<{ body: z.infer<S>; headers: Headers; status: number }> {
    const url = new URL(this.opts.baseUrl + path);
    setQuery(url, o.query);
    const repeatable =
      method !== "POST" && method !== "PATCH" ? true : Boolean(o.retry ?? o.headers?.["idempotency-key"]);
    let reauthenticated = false;
    const { res, text } = await sendWithRetries<HubApiError>({
      url,
      method,
      body: o.body,
      fetch: this.opts.fetch,
      timeoutMs: o.timeoutMs ?? this.opts.timeoutMs,
      attempts: repeatable ? this.opts.maxAttempts : 1,
      backoffMs: this.opts.backoffMs,
      sleep: this.opts.sleep,
      headers: async () => {
        const token = await this.opts.token?.();
        return { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...o.headers };
      },
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        if (res.status === 401 && this.opts.onUnauthorized && !reauthenticated) {
          // Once per request: a second 401 with a fresh token is a real refusal.
          reauthenticated = true;
          this.opts.onUnauthorized();
          return { kind: "again" };
        }
        const error = toError(res, text, method, path);
        if (error.code === FEED_CURSOR_EXPIRED) return { kind: "fail", error: new FeedCursorExpiredError(error) };
        return isOutage(res.status, "hub")
          ? { kind: "retry", error, afterMs: retryAfterMs(res.headers.get("retry-after")) }
          : { kind: "fail", error };
      },
      unavailable: (cause, n) =>
        new HubUnavailableError(noAnswer(`${method} ${path}`, `the hub at ${this.opts.baseUrl}`, n, cause), n, {
          cause,
        }),
    });
    const body = schema && text ? schema.parse(JSON.parse(text)) : undefined;
    return { body: body as z.infer<S>, headers: res.headers, status: res.status };
  }

  listSites(
    query: { limit?: number; cursor?: string; slug?: string; region?: string; q?: string } = {},
  ): Promise<SiteList> {
    return this.request("GET", "/api/v1/sites/", SiteListSchema, { query }).then((r) => r.body);
  }

  allSites(query: { slug?: string; region?: string; q?: string } = {}): AsyncGenerator<Site> {
    return everyPage((cursor) => this.listSites({ ...query, limit: 1000, cursor }));
  }

  /** One page of a site's open discrepancies (`kind` filters). */
  listSiteDiscrepancies(
    siteId: string,
    query: { limit?: number; cursor?: string; kind?: DiscrepancyKind } = {},
  ): Promise<DiscrepancyList> {
    return this.request("GET", `/api/v1/sites/${siteId}/discrepancies/`, DiscrepancyListSchema, { query }).then(
      (r) => r.body,
    );
  }

  allSiteDiscrepancies(siteId: string, query: { kind?: DiscrepancyKind } = {}): AsyncGenerator<Discrepancy> {
    return everyPage((cursor) => this.listSiteDiscrepancies(siteId, { ...query, limit: 1000, cursor }));
  }

  discrepancySummary(): Promise<DiscrepancySummary> {
    return this.request("GET", "/api/v1/discrepancies/summary", DiscrepancySummarySchema).then((r) => r.body);
  }

  getSite(id: string): Promise<{ site: Site; etag: string | null }> {
    return this.request("GET", `/api/v1/sites/${id}/`, SiteSchema).then((r) => ({
      site: r.body,
      etag: r.headers.get("etag"),
    }));
  }

  createSite(input: SiteCreate, idempotencyKey?: string): Promise<Site> {
    return this.request("POST", "/api/v1/sites/", SiteSchema, {
      body: input,
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
    }).then((r) => r.body);
  }

  updateSite(id: string, patch: SitePatch, ifMatch?: string): Promise<Site> {
    return this.request("PATCH", `/api/v1/sites/${id}/`, SiteSchema, {
      body: patch,
      headers: ifMatch ? { "if-match": ifMatch } : {},
    }).then((r) => r.body);
  }

  /** The site with this slug, or undefined. */
  async findSite(slug: string): Promise<Site | undefined> {
    return (await this.listSites({ slug, limit: 1 })).items[0];
  }

  /** The NetBox settings every netbox agent follows: clusters per site, role -> device class. */
  netboxSettings(): Promise<NetboxSettings> {
    return this.request("GET", "/api/v1/netbox/settings", NetboxSettingsSchema, {}).then((r) => r.body);
  }

  /** Device roles, with `inUse`/`deviceCount` counted at `site` when given. */
  async deviceRoles(query: { site?: string; inUse?: boolean } = {}): Promise<DeviceRole[]> {
    const roles: DeviceRole[] = [];
    for await (const r of everyPage((cursor) =>
      this.request("GET", "/api/v1/device-roles/", DeviceRoleListSchema, {
        query: { ...query, limit: 1000, cursor },
      }).then((res) => res.body),
    ))
      roles.push(r);
    return roles;
  }

  listDevices(query: DeviceQuery = {}): Promise<DeviceList> {
    return this.request("GET", "/api/v1/devices/", DeviceListSchema, { query }).then((r) => r.body);
  }

  allDevices(query: Omit<DeviceQuery, "limit" | "cursor"> = {}): AsyncGenerator<Device> {
    return everyPage((cursor) => this.listDevices({ ...query, limit: 1000, cursor }));
  }

  /** A source's complete view of a site (PUT is idempotent, so it is retried). */
  pushReflection(
    siteId: string,
    source: ReflectionSource,
    body: { observedAt: string; items: unknown[]; site?: NetboxReflectionSite },
  ): Promise<ReflectionResult> {
    return this.request("PUT", `/api/v1/sites/${siteId}/reflections/${source}/`, ReflectionResultSchema, {
      body: {
        observedAt: body.observedAt,
        complete: true,
        items: body.items,
        ...(body.site ? { site: body.site } : {}),
      },
    }).then((r) => r.body);
  }

  async heartbeat(
    satellite: string,
    agent: AgentKind,
    body: { reflectors: Record<string, number>; version?: string },
  ): Promise<void> {
    await this.request("POST", `/api/v1/satellites/${satellite}/agents/${agent}/heartbeat/`, undefined, {
      body,
      retry: true,
    }); // repeating a heartbeat only moves its time
  }

  /** A site's SLURM bootstrap configs (one per device role: Nova image, flavor, GRES, user data). */
  async slurmBootstrapConfigs(siteId: string): Promise<SlurmBootstrapConfig[]> {
    const configs: SlurmBootstrapConfig[] = [];
    for await (const c of everyPage((cursor) =>
      this.request("GET", `/api/v1/sites/${siteId}/slurm-bootstrap-configs/`, SlurmBootstrapConfigListSchema, {
        query: { limit: 1000, cursor },
      }).then((res) => res.body),
    ))
      configs.push(c);
    return configs;
  }

  getDevice(id: string): Promise<Device> {
    return this.request("GET", `/api/v1/devices/${id}/`, DeviceSchema).then((r) => r.body);
  }

  createJob(input: JobCreateInput, idempotencyKey?: string): Promise<Job> {
    return this.request("POST", "/api/v1/jobs/", JobSchema, {
      body: input,
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
    }).then((r) => r.body);
  }

  getJob(id: string): Promise<Job> {
    return this.request("GET", `/api/v1/jobs/${id}/`, JobSchema).then((r) => r.body);
  }

  listJobs(query: JobQuery = {}): Promise<JobList> {
    return this.request("GET", "/api/v1/jobs/", JobListSchema, { query }).then((r) => r.body);
  }

  allJobs(query: Omit<JobQuery, "limit" | "cursor"> = {}): AsyncGenerator<Job> {
    return everyPage((cursor) => this.listJobs({ ...query, limit: 1000, cursor }));
  }

  cancelJob(id: string): Promise<Job> {
    return this.request("POST", `/api/v1/jobs/${id}/cancel/`, JobSchema, { retry: true }).then((r) => r.body); // cancelling twice is a no-op
  }

  /** An operator's signal to a job waiting for one (REPAIR); the same signal again changes nothing, so it is retried. */
  signalJob(id: string, signal: JobSignalCreate): Promise<Job> {
    return this.request("POST", `/api/v1/jobs/${id}/signal/`, JobSchema, { body: signal, retry: true }).then(
      (r) => r.body,
    );
  }

  /** Agents only. Reports are idempotent on the hub (a repeat changes nothing), so they are retried. */
  reportJob(id: string, report: JobReport): Promise<Job> {
    return this.request("POST", `/api/v1/jobs/${id}/report/`, JobSchema, { body: report, retry: true }).then(
      (r) => r.body,
    );
  }

  /**
   * One page of the inventory feed after `after` (with `wait`, a long-poll). Throws
   * FeedCursorExpiredError when the hub no longer keeps the events after `after`: read
   * `readSnapshot()` and continue from its position.
   */
  readFeed(query: { after: string; limit?: number; wait?: number; site?: readonly string[] }): Promise<FeedPage> {
    const wait = query.wait ?? 0;
    return this.request("GET", "/api/v1/feeds/inventory", FeedPageSchema, {
      query: { after: query.after, limit: query.limit, wait: query.wait, site: query.site },
      // The hub holds a long-poll open up to `wait` seconds before it answers.
      timeoutMs: Math.max(this.opts.timeoutMs, wait * 1000 + 10_000),
    }).then((r) => r.body);
  }

  /**
   * The inventory snapshot, line by line, each parsed and validated: `snapshot` (its feed
   * position) first, then sites, device roles and devices, then `end`. Throws
   * SnapshotTruncatedError if the stream stops before `end` or `end` counts other than what came.
   */
  readSnapshot(opts: { sites?: readonly string[]; signal?: AbortSignal } = {}): AsyncGenerator<InventorySnapshotLine> {
    return readSnapshotStream({
      url: (() => {
        const url = new URL(this.opts.baseUrl + INVENTORY_SNAPSHOT_PATH);
        setQuery(url, { site: opts.sites });
        return url;
      })(),
      fetch: this.opts.fetch,
      token: this.opts.token,
      onUnauthorized: this.opts.onUnauthorized,
      signal: opts.signal,
      fail: (res, text) => toError(res, text, "GET", INVENTORY_SNAPSHOT_PATH),
      unavailable: (cause) =>
        new HubUnavailableError(
          noAnswer(`GET ${INVENTORY_SNAPSHOT_PATH}`, `the hub at ${this.opts.baseUrl}`, 1, cause),
          1,
          {
            cause,
          },
        ),
    });
  }

  async deleteSite(id: string, ifMatch?: string): Promise<void> {
    await this.request("DELETE", `/api/v1/sites/${id}/`, undefined, {
      headers: ifMatch ? { "if-match": ifMatch } : {},
    });
  }
}

/** Every item of a keyset-paginated hub list, page after page. */
async function* everyPage<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | null }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    yield* p.items;
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
}

export type JobQuery = {
  status?: JobStatus;
  kind?: JobKind;
  site?: string;
  device?: string;
  active?: boolean;
  limit?: number;
  cursor?: string;
};

export type DeviceQuery = {
  site?: string;
  role?: string;
  deviceClass?: string;
  cordoned?: boolean;
  stale?: boolean;
  nameExact?: string;
  name?: string;
  provisionState?: string;
  updatedSince?: string;
  limit?: number;
  cursor?: string;
};

function setQuery(url: URL, query: RequestOptions["query"]): void {
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    if (typeof v === "object") for (const item of v) url.searchParams.append(k, item);
    else url.searchParams.set(k, String(v));
  }
}

function toError(res: Response, text: string, method: string, path: string): HubApiError {
  let problem: Problem | undefined;
  try {
    problem = ProblemSchema.parse(JSON.parse(text));
  } catch {
    problem = undefined;
  }
  const detail = problem ? `${problem.code}: ${problem.detail}` : text.slice(0, 200) || res.statusText;
  return new HubApiError(res.status, problem, `${method} ${path} -> ${res.status} ${detail}`);
}
