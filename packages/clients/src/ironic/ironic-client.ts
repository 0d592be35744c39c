/**
 * Typed client for the OpenStack Ironic (bare metal) REST API, as the satellite agents use it:
 * list every node, read one, put one into maintenance and out of it.
 *
 * Wire format (Ironic API reference, https://docs.openstack.org/api-ref/baremetal/):
 * - Every request names a microversion in `X-OpenStack-Ironic-API-Version`; without it Ironic
 *   answers as 1.1 (no `name`, no `?detail=true`, which needs 1.43).
 * - Lists are marker-paginated: a full page carries `next`, a URL whose `marker` is the last
 *   node's UUID. The `limit` is capped by the server's `[api] max_limit` (1000 by default).
 * - Errors are `{"error_message": "<JSON string>"}`, the inner JSON holding `faultstring`.
 *
 * Nodes are parsed with zod, tolerating fields this client does not know (newer microversions
 * add some). Reads and the idempotent maintenance PUT/DELETE are retried with exponential
 * backoff and equal jitter on connection errors, timeouts, 429 and 5xx; other 4xx throw at once.
 * Failures surface as two classes so callers can tell them apart (e.g. as a metric label):
 * IronicApiError (Ironic answered, with an error) and IronicUnavailableError (it did not).
 */
import { z } from "zod";
import { isOutage, describeParseError, noAnswer, parseBody, sendWithRetries } from "../http/http.ts";
import { IronicNodeInventorySchema, type IronicNodeInventory } from "./ironic-inventory.ts";
import { IronicApiError, IronicUnavailableError } from "./ironic-errors.ts";
import { pageByMarker } from "./paging.ts";
import { IronicPortPageSchema, IronicPortSchema, type IronicPort, type IronicPortCreate } from "./ironic-port.ts";

export { IronicApiError, IronicUnavailableError } from "./ironic-errors.ts";

/**
 * The node fields this client relies on. Fields present since microversion 1.1 are required;
 * later ones are optional so a client pinned to an older microversion still parses nodes.
 */
const nodeShape = {
  uuid: z.string(),
  name: z.string().nullable().optional(), // 1.5
  driver: z.string(),
  provision_state: z.string(),
  target_provision_state: z.string().nullable(),
  provision_updated_at: z.string().nullable(),
  power_state: z.string().nullable(),
  target_power_state: z.string().nullable(),
  maintenance: z.boolean(),
  maintenance_reason: z.string().nullable(),
  fault: z.string().nullable().optional(), // 1.42
  last_error: z.string().nullable(),
  instance_uuid: z.string().nullable(),
  resource_class: z.string().nullable().optional(), // 1.21
  boot_interface: z.string().nullable().optional(), // 1.31
  conductor_group: z.string().optional(), // 1.46
  conductor: z.string().nullable().optional(), // 1.49
  owner: z.string().nullable().optional(), // 1.50
  lessee: z.string().nullable().optional(), // 1.65
  description: z.string().nullable().optional(), // 1.51
  retired: z.boolean().optional(), // 1.61
  retired_reason: z.string().nullable().optional(), // 1.61
  protected: z.boolean().optional(), // 1.48
  traits: z.array(z.string()).nullable().optional(), // 1.37
  properties: z.record(z.string(), z.unknown()),
  driver_info: z.record(z.string(), z.unknown()).optional(), // secrets come back masked ("******")
  inspection_finished_at: z.string().nullable().optional(),
  instance_info: z.record(z.string(), z.unknown()).optional(), // secrets (configdrive) come back masked
  extra: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string().nullable(),
};
export const IronicNodeSchema = z.looseObject(nodeShape);
export type IronicNode = z.infer<typeof IronicNodeSchema>;
/** A field `listNodes({ fields })` can ask for. */
export type IronicNodeField = keyof typeof nodeShape;

const NodePageSchema = z.looseObject({
  nodes: z.array(z.unknown()),
  next: z.string().optional(),
});

export interface IronicClientOptions {
  /** Ironic's base URL, e.g. http://ironic.example:6385 (a trailing /v1 is accepted too). */
  endpoint: string;
  /** Returns a Keystone token, sent as X-Auth-Token (cached and refreshed by the source), or undefined for none. */
  token?: () => Promise<string | undefined>;
  /**
   * Called when Ironic answers 401 to a token from `token`: the token was revoked or expired
   * early, so the source should drop it. The request is then retried once with a new token.
   */
  invalidateToken?: () => void;
  /** Sent as X-OpenStack-Ironic-API-Version on every request. */
  microversion?: string;
  /** Per attempt, including reading the body. */
  timeoutMs?: number;
  /** Attempts for retryable requests, including the first. */
  maxAttempts?: number;
  /** First backoff delay, milliseconds; doubles each attempt, with equal jitter (backoffDelay). */
  backoffMs?: number;
  fetch?: typeof fetch;
}

interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Safe to send again after a failure that may or may not have reached Ironic. */
  idempotent: boolean;
}

export class IronicClient {
  readonly endpoint: string;
  private readonly opts: Required<Omit<IronicClientOptions, "token" | "invalidateToken">> &
    Pick<IronicClientOptions, "token" | "invalidateToken">;

  constructor(opts: IronicClientOptions) {
    // Keystone catalogs list Ironic with or without the version; paths below add /v1.
    const endpoint = opts.endpoint.replace(/\/+$/, "").replace(/\/v1$/, "");
    this.endpoint = endpoint;
    this.opts = {
      microversion: "1.82",
      timeoutMs: 30_000,
      maxAttempts: 4,
      backoffMs: 200,
      fetch: globalThis.fetch,
      ...opts,
      endpoint,
    };
  }

  /**
   * Every node, following the marker pagination to the end. Without `fields` the nodes are
   * complete (`?detail=true`); with `fields` only those (and `uuid`, needed for paging) are
   * requested, which is much cheaper for large fleets. Ironic refuses `detail` and `fields`
   * together (400), hence the two forms.
   */
  listNodes(opts?: { limit?: number }): Promise<IronicNode[]>;
  listNodes<F extends IronicNodeField>(opts: {
    limit?: number;
    fields: readonly F[];
  }): Promise<Array<Pick<IronicNode, F | "uuid">>>;
  async listNodes(
    opts: { limit?: number; fields?: readonly IronicNodeField[] } = {},
  ): Promise<Array<Partial<IronicNode>>> {
    const limit = opts.limit ?? 1000;
    const fields = opts.fields ? [...new Set<IronicNodeField>(["uuid", ...opts.fields])] : undefined;
    const schema = fields
      ? IronicNodeSchema.pick(Object.fromEntries(fields.map((f) => [f, true])) as Record<IronicNodeField, true>)
      : IronicNodeSchema;
    const query = fields ? { fields: fields.join(","), limit } : { detail: true, limit };
    const path = "/v1/nodes";
    return pageByMarker<Partial<IronicNode>>({
      path,
      limit,
      page: async (marker) => {
        const { body, status, text } = await this.request("GET", path, NodePageSchema, {
          query: { ...query, marker },
          idempotent: true,
        });
        const items = body.nodes.map((raw) => parseNode(schema, raw, "GET", path, status, text));
        return { items, next: body.next, status, text };
      },
      markerOf: (node) => node.uuid,
    });
  }

  /** One node by UUID or name. */
  async getNode(id: string): Promise<IronicNode> {
    const path = `/v1/nodes/${encodeURIComponent(id)}`;
    const { body, status, text } = await this.request("GET", path, z.unknown(), { idempotent: true });
    return parseNode(IronicNodeSchema, body, "GET", path, status, text) as IronicNode;
  }

  /** One node by UUID or name, or null when Ironic does not know it. */
  async findNode(id: string): Promise<IronicNode | null> {
    try {
      return await this.getNode(id);
    } catch (err) {
      if (err instanceof IronicApiError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * Enrols a node (it starts in `enroll`). Not retried: a create that reached Ironic and lost
   * its answer would otherwise make a second node. Callers look the node up by name first.
   */
  async createNode(node: {
    name: string;
    driver: string;
    driver_info?: Record<string, unknown>;
    resource_class?: string;
    boot_interface?: string;
    properties?: Record<string, unknown>;
    extra?: Record<string, unknown>;
  }): Promise<IronicNode> {
    const { body, status, text } = await this.request("POST", "/v1/nodes", z.unknown(), {
      body: node,
      idempotent: false,
    });
    return parseNode(IronicNodeSchema, body, "POST", "/v1/nodes", status, text) as IronicNode;
  }

  /** JSON-patches a node (RFC 6902, as Ironic takes it). Setting the same values again is harmless. */
  async patchNode(
    id: string,
    ops: Array<{ op: "add" | "replace" | "remove"; path: string; value?: unknown }>,
  ): Promise<IronicNode> {
    const path = `/v1/nodes/${encodeURIComponent(id)}`;
    const { body, status, text } = await this.request("PATCH", path, z.unknown(), { body: ops, idempotent: true });
    return parseNode(IronicNodeSchema, body, "PATCH", path, status, text) as IronicNode;
  }

  /**
   * Asks for a provision state change (`manage`, `inspect`, `provide`, `deleted`, `rebuild`...).
   * Ironic answers 202 and moves the node asynchronously; poll the node for the outcome. A
   * request the node's state does not allow is a 400, a locked node a 409.
   */
  async setProvisionState(
    id: string,
    target: string,
    o: { configdrive?: Record<string, unknown> } = {},
  ): Promise<void> {
    await this.request("PUT", `/v1/nodes/${encodeURIComponent(id)}/states/provision`, undefined, {
      // A config drive as a JSON object (1.56+): Ironic builds the ISO from it.
      body: { target, ...o },
      idempotent: false,
    });
  }

  /**
   * Ports (`?detail=true`), of one node or holding one MAC address (Ironic matches the address
   * case-insensitively: it stores it in lower case), across pages.
   */
  async listPorts(filter: { node: string } | { address: string }): Promise<IronicPort[]> {
    const path = "/v1/ports";
    const limit = 1000;
    return pageByMarker<IronicPort>({
      path,
      limit,
      page: async (marker) => {
        const { body, status, text } = await this.request("GET", path, IronicPortPageSchema, {
          query: { ...filter, detail: true, limit, marker },
          idempotent: true,
        });
        return { items: body.ports, next: body.next, status, text };
      },
      markerOf: (port) => port.uuid,
    });
  }

  /** Creates a port. Not retried: callers look the MAC up first, and read it again after a 409. */
  async createPort(port: IronicPortCreate): Promise<IronicPort> {
    const { body } = await this.request("POST", "/v1/ports", IronicPortSchema, { body: port, idempotent: false });
    return body;
  }

  /** JSON-patches a port (RFC 6902). */
  async patchPort(
    uuid: string,
    ops: Array<{ op: "add" | "replace" | "remove"; path: string; value?: unknown }>,
  ): Promise<IronicPort> {
    const { body } = await this.request("PATCH", `/v1/ports/${encodeURIComponent(uuid)}`, IronicPortSchema, {
      body: ops,
      idempotent: true,
    });
    return body;
  }

  /** Ironic's check of each interface (power, management, deploy...), e.g. after the BMC is configured. */
  async validateNode(id: string): Promise<Record<string, { result: boolean | null; reason?: string | null }>> {
    const { body } = await this.request(
      "GET",
      `/v1/nodes/${encodeURIComponent(id)}/validate`,
      z.record(z.string(), z.looseObject({ result: z.boolean().nullable(), reason: z.string().nullable().optional() })),
      { idempotent: true },
    );
    return body;
  }

  /** The node's stored inspection inventory (1.81), or null when Ironic holds none for it. */
  async nodeInventory(id: string): Promise<IronicNodeInventory | null> {
    try {
      const { body } = await this.request(
        "GET",
        `/v1/nodes/${encodeURIComponent(id)}/inventory`,
        IronicNodeInventorySchema,
        { idempotent: true },
      );
      return body;
    } catch (err) {
      if (err instanceof IronicApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** Puts the node into maintenance with this reason (again: the reason is replaced). */
  async setMaintenance(id: string, reason: string): Promise<void> {
    await this.request("PUT", `/v1/nodes/${encodeURIComponent(id)}/maintenance`, undefined, {
      body: { reason },
      idempotent: true,
    });
  }

  /** Takes the node out of maintenance (also when it is not in maintenance). */
  async clearMaintenance(id: string): Promise<void> {
    await this.request("DELETE", `/v1/nodes/${encodeURIComponent(id)}/maintenance`, undefined, { idempotent: true });
  }

  async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S | undefined,
    o: RequestOptions,
  ): Promise<{ body: z.infer<S>; status: number; headers: Headers; text: string }> {
    const url = new URL(this.opts.endpoint + path);
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const attempts = o.idempotent ? this.opts.maxAttempts : 1;
    let token: string | undefined;
    let reauthenticated = false;
    const { res, text } = await sendWithRetries({
      url,
      method,
      body: o.body,
      fetch: this.opts.fetch,
      timeoutMs: this.opts.timeoutMs,
      attempts,
      backoffMs: this.opts.backoffMs,
      headers: async () => {
        token = await this.opts.token?.();
        return {
          accept: "application/json",
          "x-openstack-ironic-api-version": this.opts.microversion,
          ...(token ? { "x-auth-token": token } : {}),
        };
      },
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        const error = new IronicApiError(
          res.status,
          text,
          `${method} ${path} -> ${res.status} ${ironicErrorMessage(text) ?? res.statusText}`,
        );
        if (res.status === 401 && token && this.opts.invalidateToken && !reauthenticated) {
          reauthenticated = true;
          this.opts.invalidateToken();
          return { kind: "again" }; // a fresh token is not a retry of a failure
        }
        return isOutage(res.status, "ironic") ? { kind: "retry", error } : { kind: "fail", error };
      },
      unavailable: (cause, n) =>
        new IronicUnavailableError(noAnswer(`${method} ${path}`, `Ironic at ${this.opts.endpoint}`, n, cause), n, {
          cause,
        }),
    });
    const parsed = schema ? parseBody(schema, text) : { ok: true as const, value: undefined };
    if (!parsed.ok)
      throw new IronicApiError(
        res.status,
        text,
        `${method} ${path} -> ${res.status} with an unexpected body: ${parsed.problem}`,
      );
    return { body: parsed.value as z.infer<S>, status: res.status, headers: res.headers, text };
  }
}

function parseNode(
  schema: z.ZodType,
  raw: unknown,
  method: string,
  path: string,
  status: number,
  text: string,
): Partial<IronicNode> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as Partial<IronicNode>;
  const uuid = typeof raw === "object" && raw !== null && "uuid" in raw ? String(raw.uuid) : "?";
  throw new IronicApiError(
    status,
    text,
    `${method} ${path}: unexpected node ${uuid}: ${describeParseError(parsed.error)}`,
  );
}

/**
 * The readable part of an Ironic error body. Ironic (WSME) wraps a JSON document in a JSON
 * string: {"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node x could not be
 * found.\", \"debuginfo\": null}"}. keystonemiddleware's 401 in front of it is
 * {"error": {"code": 401, "title": "Unauthorized", "message": "..."}}.
 */
export function ironicErrorMessage(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 300) || undefined;
  }
  const obj = doc as { error_message?: unknown; error?: { message?: unknown; title?: unknown } } | null;
  let inner = obj?.error_message;
  if (typeof inner === "string") {
    const message = inner;
    try {
      inner = JSON.parse(message);
    } catch {
      return message; // some paths send the message itself
    }
  }
  if (inner && typeof inner === "object" && typeof (inner as { faultstring?: unknown }).faultstring === "string") {
    return (inner as { faultstring: string }).faultstring;
  }
  if (obj?.error && typeof obj.error.message === "string") return obj.error.message;
  return text.trim().slice(0, 300) || undefined;
}
