/**
 * The NetBox test server's HTTP side: authentication, routing, lists (filter, order, page),
 * details and PATCHes, on node:http.
 *
 * Authentication (SOURCES.md S4, S6, S7): `Authorization: Token <40 hex>` (v1) and
 * `Authorization: Bearer nbt_<key>.<secret>` (v2, new in 4.5). Failures are 403, not 401: DRF
 * derives the WWW-Authenticate header from the *first* authentication class, which in NetBox is
 * SessionAuthentication (it has none), so NotAuthenticated and AuthenticationFailed both render
 * as 403 `{"detail": ...}`. A token whose user lacks the view/change permission of a model: 403
 * "You do not have permission to perform this action." (DRF PermissionDenied, S11), on list and
 * detail alike.
 *
 * Not NetBox: POST only where an endpoint implements it (MAC addresses, cables), DELETE only of
 * cables, no PUT, and no
 * `brief`/`fields`/`exclude` modes. `publicUrl`
 * makes the links name another origin, as a NetBox behind a proxy does.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { coreEndpoints } from "./core.ts";
import { cableEndpoints } from "./dcim-cables.ts";
import { deviceEndpoints } from "./dcim-devices.ts";
import { interfaceEndpoints } from "./dcim-interfaces.ts";
import { siteEndpoints } from "./dcim-sites.ts";
import type { Endpoint } from "./endpoint.ts";
import { extrasEndpoints } from "./extras.ts";
import { FilterError } from "./filters.ts";
import { ipamEndpoints } from "./ipam.ts";
import { order, paginate } from "./paging.ts";
import {
  NETBOX_VERSION,
  PYTHON_VERSION,
  apiVersion,
  atLeast,
  parseRelease,
  statusBody,
  type NetboxRelease,
} from "./status.ts";
import { emptyNetboxData, netboxTime, type NetboxData } from "./store.ts";
import { View } from "./view.ts";
import { virtualizationEndpoints } from "./virtualization.ts";
import { isPlainObject } from "./endpoint.ts";
import { recordChange, serializeObject } from "./core.ts";
import { applyPatch, operatorEdit, type EditableObjectType } from "./writes.ts";

const ENDPOINTS: Array<Endpoint<{ id: number }>> = [
  ...siteEndpoints,
  ...deviceEndpoints,
  ...interfaceEndpoints,
  ...cableEndpoints,
  ...ipamEndpoints,
  ...virtualizationEndpoints,
  ...extrasEndpoints,
  ...coreEndpoints,
];

export interface NetboxRequestLog {
  method: string;
  path: string;
  query: Record<string, string[]>;
}

export interface NetboxServer {
  url: string;
  data: NetboxData;
  requests: NetboxRequestLog[];
  setDenied(types: string[]): void;
  /**
   * Takes model permissions (`dcim.add_macaddress`) from the token's user, as an admin editing
   * its ObjectPermission does: requests needing one answer 403 until `revoke([])` gives them back.
   */
  revoke(permissions: string[]): void;
  /**
   * An edit as an operator makes it in NetBox's UI: mutates the stored device, interface or MAC
   * address (or deletes a device with its components), bumps last_updated and logs the
   * object change NetBox would, so change-log pollers see it.
   */
  edit(objectType: EditableObjectType, id: number, mutate: ((rec: never) => void) | "delete"): void;
  stop(): Promise<void>;
}

export interface StartNetboxServerOptions {
  /** Accepted token(s): a v1 token (40 hex, sent as `Token <t>`) and/or a v2 token (`nbt_<key>.<secret>`, sent as `Bearer <t>`). */
  token: string | string[];
  data?: NetboxData;
  /** Object types ("dcim.macaddress") the token's user may neither view nor change: 403. */
  deniedObjectTypes?: string[];
  /**
   * When set, the model permissions the token's user holds, as NetBox names them
   * (`dcim.view_device`, `dcim.change_device`): a read of a model needs its `view_`, a write its
   * `change_` (NetBox's ObjectPermission actions), or 403 as NetBox answers. Unset: every one.
   */
  permissions?: string[];
  /**
   * Build absolute URLs (`url`, `next`, ...) on this origin instead of the request's Host, as a
   * NetBox behind a reverse proxy without USE_X_FORWARDED_HOST does.
   */
  publicUrl?: string;
  /** Clock for writes (last_updated, object change time). */
  now?: () => Date;
  /**
   * The NetBox release to answer as (default 4.5.0): "4.2.0", "4.5.0", "4.5.3", ... Decides
   * authentication, the change-log type filter and undefined custom fields (see where each is used).
   */
  version?: string;
  /** The token's allowed IPs: a request from elsewhere fails authentication (127.0.0.1 is this machine). */
  tokenAllowedIps?: string[];
}

/** What one request needs to know of the server. */
interface Context {
  data: NetboxData;
  tokens: Set<string>;
  denied: Set<string>;
  permissions: Set<string> | undefined;
  revoked: Set<string>;
  requests: NetboxRequestLog[];
  publicUrl: string | undefined;
  now: () => Date;
  version: string;
  release: NetboxRelease;
  allowedIps: string[] | undefined;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  extra: Record<string, string> = {},
  release: NetboxRelease = parseRelease(NETBOX_VERSION),
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "api-version": apiVersion(release),
    "x-request-id": requestId,
    vary: "Accept, Cookie, Origin",
    allow: "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS",
    ...extra,
  });
  res.end(text);
}

/**
 * NetBox's TokenAuthentication.authenticate() at the server's release: the failure's detail, or
 * undefined. A header with another keyword is ignored, so the request is anonymous and DRF says
 * no credentials were provided.
 * - Before 4.5 (S6): only `Token <key>`; DRF's header messages; "Invalid token".
 * - 4.5 (S15, `netbox/netbox/api/authentication.py` at v4.5.0): `Token` or `Bearer`, either with
 *   a v1 key or a v2 `nbt_<key>.<secret>` (the prefix, not the keyword, decides the version);
 *   "Invalid authorization header: ..." for a malformed header or an unparsable v2 token;
 *   "Invalid v1 token" / "Invalid v2 token".
 * Both check the token's allowed IPs after finding it: "Source IP <ip> is not permitted to
 * authenticate using this token."
 */
function authenticate(
  release: NetboxRelease,
  tokens: Set<string>,
  header: string | undefined,
  source: { ip: string; allowed: string[] | undefined },
): string | undefined {
  const parts = (header ?? "").trim().split(/\s+/).filter(Boolean);
  const keyword = parts[0]?.toLowerCase();
  const v45 = atLeast(release, "4.5.0");
  const none = "Authentication credentials were not provided.";
  if (keyword !== "token" && !(v45 && keyword === "bearer")) return none;
  let failure: string | undefined;
  if (!v45) {
    if (parts.length === 1) return "Invalid token header. No credentials provided.";
    if (parts.length > 2) return "Invalid token header. Token string should not contain spaces.";
    failure = tokens.has(parts[1]!) ? undefined : "Invalid token";
  } else {
    if (parts.length !== 2)
      return 'Invalid authorization header: Must be in the form "Bearer <key>.<token>" or "Token <token>"';
    const value = parts[1]!;
    const version = value.startsWith("nbt_") ? 2 : 1;
    if (version === 2 && !value.slice(4).includes("."))
      return "Invalid authorization header: Could not parse key from v2 token. Did you mean to use 'Token' instead of 'Bearer'?";
    failure = tokens.has(value) ? undefined : `Invalid v${version} token`;
  }
  if (failure) return failure;
  if (source.allowed && !source.allowed.includes(source.ip))
    return `Source IP ${source.ip} is not permitted to authenticate using this token.`;
  return undefined;
}

const notAllowed = (method: string) => ({ detail: `Method "${method}" not allowed.` });

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = randomUUID();
  const url = new URL(req.url ?? "/", "http://localhost");
  const method = (req.method ?? "GET").toUpperCase();
  const query: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
  ctx.requests.push({ method, path: url.pathname, query });
  const base = (ctx.publicUrl ?? `http://${req.headers.host ?? "localhost"}`).replace(/\/+$/, "");

  let bodyText = "";
  for await (const chunk of req) bodyText += String(chunk);

  if (!url.pathname.endsWith("/")) {
    // Django's APPEND_SLASH (CommonMiddleware) redirects before any view runs.
    res.writeHead(301, { location: `${url.pathname}/${url.search}`, "content-length": 0 });
    res.end();
    return;
  }
  const ip = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  const authError = authenticate(ctx.release, ctx.tokens, req.headers.authorization, { ip, allowed: ctx.allowedIps });
  if (authError) return send(res, 403, { detail: authError }, requestId, {}, ctx.release);

  if (url.pathname === "/api/status/") {
    if (method !== "GET" && method !== "HEAD") return send(res, 405, notAllowed(method), requestId);
    return send(res, 200, statusBody(ctx.version), requestId, {}, ctx.release);
  }

  const match = /^\/api\/([a-z-]+\/[a-z-]+)\/(?:(\d+)\/)?$/.exec(url.pathname);
  const ep = match ? ENDPOINTS.find((e) => e.path === match[1]) : undefined;
  if (!ep || !match) return send(res, 404, { detail: "Not found." }, requestId);
  if (ctx.denied.has(ep.objectType) || !holds(ctx, ep.objectType, method))
    return send(res, 403, { detail: "You do not have permission to perform this action." }, requestId);

  const v = new View(ctx.data, base, ctx.release);
  if (match[2] === undefined) {
    if (method === "POST" && ep.create) return create(ctx, res, v, ep, bodyText, requestId);
    if (method !== "GET" && method !== "HEAD") return send(res, 405, notAllowed(method), requestId);
    const list = renderList(v, ep, url);
    return send(res, list.status, list.body, requestId, {}, ctx.release);
  }

  const row = ep.rows(ctx.data).find((r) => r.id === Number(match[2]));
  if (!row) return send(res, 404, { detail: `No ${ep.objectName} matches the given query.` }, requestId);
  if (method === "GET" || method === "HEAD") return send(res, 200, ep.render(v, row), requestId);
  if (method === "DELETE" && ep.remove) {
    // DRF's destroy: 204 without a body; the object change keeps what was deleted.
    const before = { ...(row as object) } as Record<string, unknown>;
    ep.remove(ctx.data, row);
    recordChange(ctx.data, {
      time: netboxTime(ctx.now()),
      request_id: requestId,
      action: "delete",
      changed_object_type: ep.objectType,
      changed_object_id: row.id,
      object_repr: String(row.id),
      prechange_data: before,
      postchange_data: null,
    });
    res.writeHead(204, {
      "api-version": apiVersion(ctx.release),
      "x-request-id": requestId,
      vary: "Accept, Cookie, Origin",
    });
    res.end();
    return;
  }
  if (method !== "PATCH" || !ep.patch) return send(res, 405, notAllowed(method), requestId);
  const patched = applyPatch(v, { ...ep, patch: ep.patch }, row, bodyText, {
    time: () => netboxTime(ctx.now()),
    requestId,
  });
  if (patched.status === 400) return send(res, 400, patched.body, requestId);
  return send(res, 200, ep.render(new View(ctx.data, base, ctx.release), row), requestId, {}, ctx.release);
}

/**
 * A POST to a list (S19): DRF's create answers 201 with the full representation, or 400 with
 * the serializer's errors and nothing stored; the object change is logged as `create`.
 */
function create(
  ctx: Context,
  res: ServerResponse,
  v: View,
  ep: Endpoint<{ id: number }>,
  bodyText: string,
  requestId: string,
): void {
  let body: unknown;
  try {
    body = JSON.parse(bodyText || "{}");
  } catch (err) {
    return send(res, 400, { detail: `JSON parse error - ${(err as Error).message}` }, requestId);
  }
  // A list would be a bulk create; the fleet manager sends one object at a time.
  if (!isPlainObject(body))
    return send(res, 400, { non_field_errors: ["netbox test server: bulk create is not implemented"] }, requestId);
  const time = netboxTime(ctx.now());
  const made = ep.create!(v, body, time);
  if ("errors" in made) return send(res, 400, made.errors, requestId);
  const after = serializeObject(ctx.data, ep.objectType, made.record as never);
  recordChange(ctx.data, {
    time,
    request_id: requestId,
    action: "create",
    changed_object_type: ep.objectType,
    changed_object_id: made.record.id,
    object_repr: String((made.record as { mac_address?: string }).mac_address ?? made.record.id),
    prechange_data: null,
    postchange_data: after,
  });
  return send(res, 201, ep.render(new View(ctx.data, v.base, ctx.release), made.record), requestId, {}, ctx.release);
}

/** A list page: the endpoint's rows filtered by the query, ordered, paged; 400 for a bad filter value. */
function renderList(v: View, ep: Endpoint<{ id: number }>, url: URL): { status: number; body: unknown } {
  let selected = ep.rows(v.data);
  try {
    for (const [param, filter] of Object.entries(ep.filters)) {
      const values = url.searchParams.getAll(param).filter((x) => x !== "");
      if (!values.length) continue;
      const test = filter(values, v);
      selected = selected.filter(test);
    }
  } catch (err) {
    if (err instanceof FilterError) return { status: 400, body: { [err.param]: err.messages } };
    throw err;
  }
  selected = order(selected, url.searchParams.get("ordering") ?? ep.defaultOrdering);
  const { count, next, previous, page } = paginate(selected, v.base, url);
  return { status: 200, body: { count, next, previous, results: page.map((r) => ep.render(v, r)) } };
}

/** NetBox's 500 page: `{error, exception, netbox_version, python_version}`. */
function serverError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  send(
    res,
    500,
    {
      error: String(err),
      exception: (err as Error)?.name ?? "Error",
      netbox_version: NETBOX_VERSION,
      python_version: PYTHON_VERSION,
    },
    "",
  );
}

/** Whether the token's user holds the model permission a request needs ("dcim.device" + GET: dcim.view_device). */
function holds(ctx: Context, objectType: string, method: string): boolean {
  const [app, model] = objectType.split(".");
  const action =
    method === "GET" || method === "HEAD"
      ? "view"
      : method === "POST"
        ? "add"
        : method === "DELETE"
          ? "delete"
          : "change";
  const name = `${app}.${action}_${model}`;
  return !ctx.revoked.has(name) && (!ctx.permissions || ctx.permissions.has(name));
}

export async function startNetboxServer(opts: StartNetboxServerOptions): Promise<NetboxServer> {
  const ctx: Context = {
    data: opts.data ?? emptyNetboxData(),
    tokens: new Set(Array.isArray(opts.token) ? opts.token : [opts.token]),
    denied: new Set(opts.deniedObjectTypes ?? []),
    permissions: opts.permissions && new Set(opts.permissions),
    revoked: new Set(),
    requests: [],
    publicUrl: opts.publicUrl,
    now: opts.now ?? (() => new Date()),
    version: opts.version ?? NETBOX_VERSION,
    release: parseRelease(opts.version ?? NETBOX_VERSION),
    allowedIps: opts.tokenAllowedIps,
  };
  const server: Server = createServer((req, res) => {
    handle(ctx, req, res).catch((err: unknown) => serverError(res, err));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    data: ctx.data,
    requests: ctx.requests,
    setDenied(types) {
      ctx.denied = new Set(types);
    },
    revoke(permissions) {
      ctx.revoked = new Set(permissions);
    },
    edit(objectType, id, mutate) {
      operatorEdit(ctx.data, netboxTime(ctx.now()), objectType, id, mutate);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
