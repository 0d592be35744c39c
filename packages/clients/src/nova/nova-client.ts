/**
 * Typed client for the OpenStack Compute (Nova) API, as SLURM adoption uses it: find, create,
 * read and delete the server on an Ironic node, and resolve a flavor name.
 *
 * Wire format (Compute API reference, https://docs.openstack.org/api-ref/compute/, and nova's
 * doc/api_samples at the 2023.1 release):
 * - Every request names microversion 2.74 in `OpenStack-API-Version: compute 2.74` (and the older
 *   `X-OpenStack-Nova-API-Version: 2.74`, which Nova still reads): 2.74 is the first that takes
 *   `hypervisor_hostname` in a server create, which pins the server to one Ironic node (whose
 *   hypervisor hostname is its UUID). Nova echoes the version it served in the same headers.
 * - `POST /servers` answers 202 with `{"server": {"id", "links", ...}}` and builds the server in
 *   the background: BUILD, then ACTIVE or ERROR with a `fault` `{code, message, created}`
 *   (api_samples/servers/v2.74/server-create-resp.json, v2.71/server-get-resp.json).
 * - Errors are `{"<faultName>": {"code", "message"}}`, the name per status (badRequest 400,
 *   itemNotFound 404, conflictingRequest 409, computeFault 500, ...: nova/api/openstack/wsgi.py
 *   `Fault`).
 *
 * Reads and DELETE are retried on connection errors, 429 and 5xx; a create is sent once (a lost
 * answer may have made a server: callers look it up by name before creating again).
 */
import { z } from "zod";
import {
  SourceApiError,
  SourceUnavailableError,
  isOutage,
  noAnswer,
  parseBody,
  sendWithRetries,
} from "../http/http.ts";

/** The microversion this client speaks (see above). */
export const NOVA_MICROVERSION = "2.74";

export class NovaApiError extends SourceApiError {
  constructor(
    status: number,
    /** The fault's name in the body (`badRequest`, `itemNotFound`, ...), when Nova sent one. */
    readonly fault: string | undefined,
    message: string,
  ) {
    super("nova", status, message);
    this.name = "NovaApiError";
  }
}

/** No answer from Nova (connection refused or reset, DNS, timeout) after every attempt. */
export class NovaUnavailableError extends SourceUnavailableError {}

/** The server fields this client relies on (api_samples/servers/v2.71/server-get-resp.json). */
export const NovaServerSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  /** BUILD, ACTIVE, ERROR, DELETED, ... */
  status: z.string(),
  tenant_id: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  key_name: z.string().nullable().optional(),
  /** Present when the server is in ERROR (and after some failed actions). */
  fault: z.looseObject({ code: z.number(), message: z.string(), created: z.string().optional() }).optional(),
  "OS-EXT-SRV-ATTR:hypervisor_hostname": z.string().nullable().optional(),
  "OS-EXT-STS:task_state": z.string().nullable().optional(),
  "OS-EXT-STS:vm_state": z.string().optional(),
});
export type NovaServer = z.infer<typeof NovaServerSchema>;

const ServerBody = z.object({ server: NovaServerSchema });
const CreatedBody = z.object({ server: z.looseObject({ id: z.string() }) });
const ServerList = z.object({ servers: z.array(NovaServerSchema) });
const FlavorList = z.object({ flavors: z.array(z.looseObject({ id: z.string(), name: z.string() })) });

export interface NovaServerCreate {
  name: string;
  imageRef: string;
  flavorRef: string;
  keyName: string;
  /** Provider network UUID. */
  networkId: string;
  /** Base64 cloud-init user data (Nova's limit: 64 KiB decoded). */
  userData?: string | undefined;
  /** The Ironic node UUID: Nova's hypervisor hostname for a bare-metal node. */
  hypervisorHostname: string;
  metadata: Record<string, string>;
}

export interface NovaClientOptions {
  /** The compute endpoint, e.g. http://nova.example:8774/v2.1 (as Keystone's catalog lists it). */
  endpoint: string;
  /** A Keystone token, sent as X-Auth-Token. */
  token?: () => Promise<string | undefined>;
  /** Called when Nova answers 401: the token is dropped and the request sent once more. */
  invalidateToken?: () => void;
  timeoutMs?: number;
  maxAttempts?: number;
  backoffMs?: number;
  fetch?: typeof fetch;
}

export class NovaClient {
  readonly endpoint: string;
  private readonly opts: Required<Omit<NovaClientOptions, "token" | "invalidateToken">> &
    Pick<NovaClientOptions, "token" | "invalidateToken">;

  constructor(opts: NovaClientOptions) {
    const endpoint = opts.endpoint.replace(/\/+$/, "");
    this.endpoint = endpoint;
    this.opts = { timeoutMs: 30_000, maxAttempts: 4, backoffMs: 200, fetch: globalThis.fetch, ...opts, endpoint };
  }

  /** The server, or null once Nova no longer knows it (404, as after a delete). */
  async server(id: string): Promise<NovaServer | null> {
    try {
      return (await this.request("GET", `/servers/${encodeURIComponent(id)}`, ServerBody, { idempotent: true })).server;
    } catch (err) {
      if (err instanceof NovaApiError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * Servers of exactly this name in the credential's project. Nova's `name` filter is a regular
   * expression, so the name is anchored and escaped, and the answers are compared again.
   */
  async serversNamed(name: string): Promise<NovaServer[]> {
    const pattern = `^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
    const { servers } = await this.request("GET", "/servers/detail", ServerList, {
      idempotent: true,
      query: { name: pattern },
    });
    return servers.filter((s) => s.name === name);
  }

  /** Creates a server; returns its id (Nova builds it in the background). */
  async createServer(s: NovaServerCreate): Promise<string> {
    const body = {
      server: {
        name: s.name,
        imageRef: s.imageRef,
        flavorRef: s.flavorRef,
        key_name: s.keyName,
        networks: [{ uuid: s.networkId }],
        hypervisor_hostname: s.hypervisorHostname,
        metadata: s.metadata,
        ...(s.userData ? { user_data: s.userData } : {}),
      },
    };
    return (await this.request("POST", "/servers", CreatedBody, { idempotent: false, body })).server.id;
  }

  /** Deletes a server; one Nova no longer knows counts as deleted. */
  async deleteServer(id: string): Promise<void> {
    try {
      await this.request("DELETE", `/servers/${encodeURIComponent(id)}`, undefined, { idempotent: true });
    } catch (err) {
      if (!(err instanceof NovaApiError && err.status === 404)) throw err;
    }
  }

  /**
   * The id of a flavor given by id or name (`flavorRef` takes only an id). Nova has no name
   * filter on flavors, so the project's flavors are listed (public and those it may use).
   */
  async flavorId(nameOrId: string): Promise<string | null> {
    const { flavors } = await this.request("GET", "/flavors", FlavorList, { idempotent: true });
    return (flavors.find((f) => f.id === nameOrId) ?? flavors.find((f) => f.name === nameOrId))?.id ?? null;
  }

  private async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S | undefined,
    o: { idempotent: boolean; body?: unknown; query?: Record<string, string> },
  ): Promise<z.infer<S>> {
    const url = new URL(this.endpoint + path);
    for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
    let token: string | undefined;
    let reauthenticated = false;
    const { res, text } = await sendWithRetries({
      url,
      method,
      body: o.body,
      fetch: this.opts.fetch,
      timeoutMs: this.opts.timeoutMs,
      attempts: o.idempotent ? this.opts.maxAttempts : 1,
      backoffMs: this.opts.backoffMs,
      headers: async () => {
        token = await this.opts.token?.();
        return {
          accept: "application/json",
          "openstack-api-version": `compute ${NOVA_MICROVERSION}`,
          "x-openstack-nova-api-version": NOVA_MICROVERSION,
          ...(token ? { "x-auth-token": token } : {}),
        };
      },
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        if (res.status === 401 && token && this.opts.invalidateToken && !reauthenticated) {
          reauthenticated = true;
          this.opts.invalidateToken();
          return { kind: "again" };
        }
        const fault = novaFault(text);
        const error = new NovaApiError(
          res.status,
          fault?.name,
          `Nova ${method} ${path} -> ${res.status}: ${fault?.message ?? (text.trim().slice(0, 300) || res.statusText)}`,
        );
        return isOutage(res.status, "nova") ? { kind: "retry", error } : { kind: "fail", error };
      },
      unavailable: (cause, n) =>
        new NovaUnavailableError(noAnswer(`${method} ${path}`, `Nova at ${this.endpoint}`, n, cause), n, { cause }),
    });
    if (!schema) return undefined as z.infer<S>;
    const parsed = parseBody(schema, text);
    if (!parsed.ok)
      throw new NovaApiError(
        res.status,
        undefined,
        `Nova ${method} ${path} -> ${res.status} with an unexpected body: ${parsed.problem}`,
      );
    return parsed.value;
  }
}

/** `{"itemNotFound": {"code": 404, "message": "..."}}` → its name and message. */
function novaFault(text: string): { name: string; message: string } | undefined {
  try {
    const doc = JSON.parse(text) as Record<string, { message?: unknown }>;
    const [name, inner] = Object.entries(doc)[0] ?? [];
    if (name && typeof inner?.message === "string") return { name, message: inner.message };
  } catch {
    // not JSON: a proxy's page
  }
  return undefined;
}
