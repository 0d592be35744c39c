/**
 * A Keystone v3 stand-in for the OpenStack client tests, speaking the real wire format for
 * application credentials (keystone api-ref samples auth-application-credential-*.json). It also
 * fronts Ironic the way a deployment's keystonemiddleware does: /baremetal/* (and
 * /baremetal-internal/*) is forwarded to `ironicUrl` only with an X-Auth-Token it issued and has
 * not revoked. A test Ironic runs in noauth mode and would ignore the token, so this is where its
 * presence is proven. With `computeUrl` it lists a `compute` service too and fronts the Nova test
 * server (packages/test-support/src/nova) the same way at /compute/*.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ServiceCatalog } from "../openstack/index.ts";

export const KEYSTONE_SECRET = "s3cr3t-app-cred-value";
export const KEYSTONE_CREDENTIAL_ID = "423f19a4ac1e4f48bbb4180756e6eb6c";

export interface KeystoneServer {
  url: string;
  /** Where /baremetal/* is forwarded (a real Ironic); unset: 502. */
  ironicUrl: string | undefined;
  /** Where /compute/* is forwarded (the Nova test server, its /v2.1 included); unset: no compute in the catalog. */
  computeUrl: string | undefined;
  /** X-Auth-Token of every request forwarded to Nova, with its method and path. */
  computeCalls: { token: string | undefined; method: string; path: string }[];
  /** Every body POSTed to /v3/auth/tokens. */
  authBodies: unknown[];
  issued: string[];
  revoked: Set<string>;
  /** X-Auth-Token of every request forwarded to Ironic, with its path. */
  ironicCalls: { token: string | undefined; path: string }[];
  expiresAt: Date;
  /** What GET /v3/projects lists (filtered by ?name=), e.g. the Ironic enrol target project. */
  projects: { id: string; name: string; domain_id: string }[];
  /** Forgets every request and token (between tests). */
  reset(): void;
  close(): Promise<void>;
}

/** The catalog the stand-in hands out: Keystone itself, and Ironic public and internal in RegionOne, public in RegionTwo. */
export function keystoneCatalog(base: string, opts: { compute?: boolean } = {}): ServiceCatalog {
  const endpoint = (id: string, iface: string, region: string, url: string) => ({
    id,
    interface: iface,
    region_id: region,
    region,
    url,
  });
  return [
    {
      type: "identity",
      name: "keystone",
      id: "408af8b8",
      endpoints: [endpoint("a7b9", "public", "RegionOne", `${base}/v3`)],
    },
    {
      type: "baremetal",
      name: "ironic",
      id: "5d8a3c2f",
      endpoints: [
        endpoint("e1", "public", "RegionOne", `${base}/baremetal`),
        endpoint("e2", "internal", "RegionOne", `${base}/baremetal-internal`),
        endpoint("e3", "public", "RegionTwo", "http://127.0.0.1:9/region-two"),
      ],
    },
    ...(opts.compute
      ? [
          {
            type: "compute",
            name: "nova",
            id: "8a2c7d1e",
            endpoints: [endpoint("c1", "public", "RegionOne", `${base}/compute/v2.1`)],
          },
        ]
      : []),
  ];
}

/** A clouds.yaml with one application-credential cloud "kef" in RegionOne; `extra` is appended to it. */
export function appCredentialCloud(keystoneUrl: string, extra = "", secret = KEYSTONE_SECRET): string {
  return `clouds:
  kef:
    auth_type: v3applicationcredential
    auth:
      auth_url: ${keystoneUrl}/v3
      application_credential_id: ${KEYSTONE_CREDENTIAL_ID}
      application_credential_secret: ${secret}
    region_name: RegionOne
${extra}`;
}

function isValidAuthBody(body: unknown): boolean {
  const auth = (
    body as {
      auth?: { identity?: { methods?: unknown; application_credential?: Record<string, unknown> }; scope?: unknown };
    }
  ).auth;
  const ac = auth?.identity?.application_credential;
  if (
    !auth ||
    auth.scope !== undefined ||
    JSON.stringify(auth.identity?.methods) !== '["application_credential"]' ||
    !ac
  )
    return false;
  if (typeof ac.id === "string") return Object.keys(ac).sort().join() === "id,secret";
  return (
    typeof ac.name === "string" && typeof ac.user === "object" && Object.keys(ac).sort().join() === "name,secret,user"
  );
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const unauthorized = (res: ServerResponse) =>
  json(res, 401, {
    error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." },
  });

/** POST /v3/auth/tokens: a token for the credential whose secret is KEYSTONE_SECRET. */
function issueToken(k: KeystoneServer, raw: string, res: ServerResponse): void {
  const body: unknown = JSON.parse(raw);
  k.authBodies.push(body);
  if (!isValidAuthBody(body))
    return json(res, 400, {
      error: { code: 400, title: "Bad Request", message: "Invalid input for field 'identity'" },
    });
  const ac = (body as { auth: { identity: { application_credential: { secret: string } } } }).auth.identity
    .application_credential;
  if (ac.secret !== KEYSTONE_SECRET) return unauthorized(res);
  const token = `gAAAAAB-token-${k.issued.length + 1}`;
  k.issued.push(token);
  json(
    res,
    201,
    {
      token: {
        methods: ["application_credential"],
        expires_at: k.expiresAt.toISOString().replace("Z", "000Z"), // Keystone sends microseconds
        issued_at: "2018-01-15T21:14:05.000000Z",
        project: { id: "231c62fb", name: "site-kef", domain: { id: "default", name: "Default" } },
        application_credential_restricted: true,
        catalog: keystoneCatalog(k.url, { compute: k.computeUrl !== undefined }),
      },
    },
    { "x-subject-token": token },
  );
}

/**
 * GET /v3/projects[?name=]: Keystone's "List projects" (identity API v3 api-ref, response
 * `{"projects": [...], "links": {...}}`), for a token this server issued.
 */
function listProjects(k: KeystoneServer, req: IncomingMessage, res: ServerResponse): void {
  const token = req.headers["x-auth-token"] as string | undefined;
  if (!token || !k.issued.includes(token) || k.revoked.has(token)) return unauthorized(res);
  const url = new URL(req.url!, k.url);
  const name = url.searchParams.get("name");
  const projects = k.projects
    .filter((p) => name === null || p.name === name)
    .map((p) => ({
      ...p,
      description: "",
      enabled: true,
      is_domain: false,
      parent_id: p.domain_id,
      tags: [],
      links: { self: `${k.url}/v3/projects/${p.id}` },
    }));
  json(res, 200, { projects, links: { self: `${k.url}${req.url}`, previous: null, next: null } });
}

/** /baremetal*: forwarded to Ironic with a valid token, 401 without. */
function forwardToIronic(
  k: KeystoneServer,
  req: IncomingMessage,
  raw: string,
  ironicPath: string,
  res: ServerResponse,
) {
  const token = req.headers["x-auth-token"] as string | undefined;
  k.ironicCalls.push({ token, path: req.url! });
  if (!token || !k.issued.includes(token) || k.revoked.has(token)) return unauthorized(res);
  if (!k.ironicUrl) return json(res, 502, { error: { code: 502, title: "Bad Gateway", message: "no Ironic" } });
  void fetch(`${k.ironicUrl}${ironicPath}`, {
    method: req.method,
    headers: {
      "x-openstack-ironic-api-version": String(req.headers["x-openstack-ironic-api-version"]),
      ...(raw ? { "content-type": "application/json" } : {}),
    },
    body: raw || undefined,
  }).then(async (r) => {
    res.writeHead(r.status, { "content-type": "application/json" });
    res.end(await r.text());
  });
}

/**
 * /compute/*: forwarded to the Nova test server with a valid token (as keystonemiddleware in front
 * of nova-api), 401 without; the microversion headers go both ways, with Location.
 */
function forwardToNova(k: KeystoneServer, req: IncomingMessage, raw: string, path: string, res: ServerResponse) {
  const token = req.headers["x-auth-token"] as string | undefined;
  k.computeCalls.push({ token, method: req.method!, path });
  if (!token || !k.issued.includes(token) || k.revoked.has(token)) return unauthorized(res);
  if (!k.computeUrl) return json(res, 502, { error: { code: 502, title: "Bad Gateway", message: "no Nova" } });
  const pass = ["openstack-api-version", "x-openstack-nova-api-version", "content-type", "accept"];
  const headers = Object.fromEntries(pass.flatMap((h) => (req.headers[h] ? [[h, String(req.headers[h])]] : [])));
  void fetch(`${k.computeUrl}${path}`, { method: req.method, headers, body: raw || undefined }).then(
    async (r) => {
      const back = ["content-type", "location", "openstack-api-version", "x-openstack-nova-api-version", "vary"];
      res.writeHead(
        r.status,
        Object.fromEntries(back.flatMap((h) => (r.headers.get(h) ? [[h, r.headers.get(h)!]] : []))),
      );
      res.end(await r.text());
    },
    () => json(res, 502, { error: { code: 502, title: "Bad Gateway", message: "Nova did not answer" } }),
  );
}

export async function startKeystoneServer(
  opts: { ironicUrl?: string; computeUrl?: string; projects?: KeystoneServer["projects"] } = {},
): Promise<KeystoneServer> {
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v3/auth/tokens") return issueToken(k, raw, res);
      if (req.method === "GET" && /^\/v3\/projects(\?|$)/.test(req.url ?? "")) return listProjects(k, req, res);
      const m = /^\/(baremetal|baremetal-internal)(\/.*)$/.exec(req.url ?? "");
      if (m) return forwardToIronic(k, req, raw, m[2]!, res);
      const nova = /^\/compute(\/.*)$/.exec(req.url ?? "");
      if (nova) return forwardToNova(k, req, raw, nova[1]!, res);
      json(res, 404, { error: { code: 404, title: "Not Found", message: "not here" } });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const k: KeystoneServer = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    ironicUrl: opts.ironicUrl,
    computeUrl: opts.computeUrl,
    computeCalls: [],
    authBodies: [],
    issued: [],
    revoked: new Set(),
    ironicCalls: [],
    expiresAt: new Date("2030-01-01T12:00:00Z"),
    projects: opts.projects ?? [{ id: "231c62fb", name: "site-kef", domain_id: "default" }],
    reset() {
      this.authBodies = [];
      this.issued = [];
      this.revoked.clear();
      this.ironicCalls = [];
      this.computeCalls = [];
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return k;
}
