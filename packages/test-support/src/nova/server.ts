/**
 * A Nova (OpenStack Compute) API test server: Nova cannot run here, so the tests of SLURM
 * adoption talk to this, and it drives the REAL test Ironic as Nova's Ironic driver would
 * (./driver.ts). It serves what adoption uses, in Nova's wire format (Compute API reference,
 * https://docs.openstack.org/api-ref/compute/, and nova at the 2023.1 release, whose maximum
 * microversion is 2.95):
 *
 * - microversions (nova/api/openstack/api_version_request.py, wsgi.py): asked for by
 *   `OpenStack-API-Version: compute X.Y` or `X-OpenStack-Nova-API-Version: X.Y` (default 2.1,
 *   `latest` = 2.95); echoed in both headers with `Vary`; outside 2.1..2.95 a 406, a malformed one
 *   a 400;
 * - `POST /v2.1/servers` (api_samples/servers/v2.74/server-create-req-with-only-node.json,
 *   server-create-resp.json): 202, `Location`, `{"server": {"id", "links", "OS-DCF:diskConfig",
 *   "security_groups", "adminPass"}}`; `hypervisor_hostname` only from 2.74 (earlier it is an
 *   unexpected property, 400); unknown flavor, image, key pair or network a 400;
 * - `GET /v2.1/servers/{id}` and `/servers/detail?name=<regex>` (api_samples/servers/v2.71/
 *   server-get-resp.json): status BUILD → ACTIVE, or ERROR with `fault {code, message, created}`;
 * - `DELETE /v2.1/servers/{id}`: 204; the server is gone (404) once its node is undeployed; a
 *   locked server (`POST /servers/{id}/action {"lock": null}`) is a 409 "Instance <id> is locked"
 *   (nova/exception.py InstanceIsLocked);
 * - `GET /v2.1/flavors` (api_samples/flavors/flavors-list-resp.json);
 * - faults `{"<name>": {"code", "message"}}`: badRequest 400, itemNotFound 404, conflictingRequest
 *   409, computeFault otherwise (nova/api/openstack/wsgi.py `Fault`); a server Nova does not know
 *   is "Instance <id> could not be found." (nova/exception.py InstanceNotFound).
 *
 * Authentication is the Keystone stand-in's job (packages/clients/src/testing/keystone-server.ts
 * forwards /compute/* here only with a token it issued), as keystonemiddleware is nova-api's.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BuildFailure, NO_VALID_HOST, destroy, scheduleOn, spawn, type Flavor } from "./driver.ts";

export const NOVA_MIN_VERSION = "2.1";
export const NOVA_MAX_VERSION = "2.95";
const FAULT_NAMES: Record<number, string> = {
  400: "badRequest",
  401: "unauthorized",
  403: "forbidden",
  404: "itemNotFound",
  405: "badMethod",
  409: "conflictingRequest",
  413: "overLimit",
  415: "badMediaType",
  429: "overLimit",
  501: "notImplemented",
  503: "serviceUnavailable",
};

export interface TestServer {
  id: string;
  name: string;
  status: "BUILD" | "ACTIVE" | "ERROR";
  taskState: string | null;
  vmState: "building" | "active" | "error";
  nodeUuid: string | null;
  imageId: string;
  flavor: Flavor;
  keyName: string;
  networkId: string;
  userData: string | undefined;
  metadata: Record<string, string>;
  fault: { code: number; message: string; created: string } | undefined;
  created: string;
  updated: string;
  deleting: boolean;
  locked: boolean;
}

export interface NovaTestServerOptions {
  /** The real test Ironic the servers are deployed on (noauth). */
  ironicUrl: string;
  /** The project servers belong to (the Keystone stand-in's token project). */
  projectId?: string;
  images?: { id: string; name: string }[];
  flavors?: Flavor[];
  keypairs?: string[];
  networks?: { id: string; name: string }[];
  /** How often the driver polls Ironic (ms). */
  pollMs?: number;
  /**
   * What the booted instance does once ACTIVE (its cloud-init: a SLURM compute image starts its
   * slurmd). Errors are kept in `bootErrors`.
   */
  onActive?: (server: TestServer) => Promise<void> | void;
}

export interface NovaTestServer {
  /** The compute endpoint with its version, e.g. http://127.0.0.1:40123/v2.1 */
  url: string;
  /** Without the version, for the Keystone stand-in's `computeUrl`. */
  root: string;
  servers: Map<string, TestServer>;
  /** Every request: method, path, and the microversion it was served at. */
  requests: { method: string; path: string; version: string }[];
  bootErrors: Error[];
  /** Replaces what a booted instance does (NovaTestServerOptions.onActive), e.g. once the SLURM peer runs. */
  setOnActive(fn: NovaTestServerOptions["onActive"]): void;
  close(): Promise<void>;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** [major, minor] of a version string, or null when it is malformed. */
function parseVersion(v: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : null;
}
const cmp = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];

class HttpFault extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The microversion a request asks for (nova/api/openstack/wsgi.py `Request.set_api_version_request`). */
function requestedVersion(req: IncomingMessage): string {
  const modern = req.headers["openstack-api-version"];
  const legacy = req.headers["x-openstack-nova-api-version"];
  let asked: string | undefined;
  if (typeof modern === "string") {
    const m = /(?:^|,)\s*compute\s+(\S+)/i.exec(modern);
    asked = m?.[1];
  }
  asked ??= typeof legacy === "string" ? legacy.trim() : undefined;
  if (!asked) return NOVA_MIN_VERSION;
  if (asked === "latest") return NOVA_MAX_VERSION;
  const v = parseVersion(asked);
  if (!v)
    throw new HttpFault(400, `API Version String ${asked} is of invalid format. Must be of format MajorNum.MinorNum.`);
  if (cmp(v, parseVersion(NOVA_MIN_VERSION)!) < 0 || cmp(v, parseVersion(NOVA_MAX_VERSION)!) > 0)
    throw new HttpFault(
      406,
      `Version ${asked} is not supported by the API. Minimum is ${NOVA_MIN_VERSION} and maximum is ${NOVA_MAX_VERSION}.`,
    );
  return asked;
}

export async function startNovaServer(o: NovaTestServerOptions): Promise<NovaTestServer> {
  const projectId = o.projectId ?? "231c62fb";
  const images = o.images ?? [];
  const flavors = o.flavors ?? [];
  const keypairs = new Set(o.keypairs ?? []);
  const networks = o.networks ?? [];
  const pollMs = o.pollMs ?? 100;
  const servers = new Map<string, TestServer>();
  const requests: NovaTestServer["requests"] = [];
  const bootErrors: Error[] = [];
  let onActive = o.onActive;
  let base = "";

  const links = (kind: string, id: string) => [
    { href: `${base}/v2.1/${projectId}/${kind}/${id}`, rel: "self" },
    { href: `${base}/${projectId}/${kind}/${id}`, rel: "bookmark" },
  ];

  /** The server as GET /servers/{id} shows it at 2.71+ (api_samples/servers/v2.71/server-get-resp.json). */
  const show = (s: TestServer) => ({
    "OS-DCF:diskConfig": "MANUAL",
    "OS-EXT-AZ:availability_zone": s.nodeUuid && s.status !== "ERROR" ? "nova" : "",
    "OS-EXT-SRV-ATTR:host": s.nodeUuid && s.status !== "ERROR" ? "ironic-compute" : null,
    "OS-EXT-SRV-ATTR:hostname": s.name,
    "OS-EXT-SRV-ATTR:hypervisor_hostname": s.status === "ERROR" ? null : s.nodeUuid,
    "OS-EXT-SRV-ATTR:instance_name": `instance-${s.id.slice(0, 8)}`,
    "OS-EXT-SRV-ATTR:user_data": s.userData ?? null,
    "OS-EXT-STS:power_state": s.status === "ACTIVE" ? 1 : 0,
    "OS-EXT-STS:task_state": s.taskState,
    "OS-EXT-STS:vm_state": s.vmState,
    "OS-SRV-USG:launched_at": s.status === "ACTIVE" ? s.updated : null,
    "OS-SRV-USG:terminated_at": null,
    accessIPv4: "",
    accessIPv6: "",
    addresses: {},
    config_drive: "True",
    created: s.created,
    description: null,
    flavor: {
      disk: s.flavor.disk,
      ephemeral: 0,
      extra_specs: s.flavor.extraSpecs,
      original_name: s.flavor.name,
      ram: s.flavor.ram,
      swap: 0,
      vcpus: s.flavor.vcpus,
    },
    hostId: "",
    id: s.id,
    image: { id: s.imageId, links: [links("images", s.imageId)[1]] },
    key_name: s.keyName,
    links: links("servers", s.id),
    locked: s.locked,
    metadata: s.metadata,
    name: s.name,
    "os-extended-volumes:volumes_attached": [],
    progress: 0,
    security_groups: [{ name: "default" }],
    server_groups: [],
    status: s.status,
    tags: [],
    tenant_id: projectId,
    trusted_image_certificates: null,
    updated: s.updated,
    user_id: "fleet-manager",
    ...(s.fault ? { fault: s.fault } : {}),
  });

  const touch = (s: TestServer, change: Partial<TestServer>) => Object.assign(s, change, { updated: now() });

  /** The build Nova's conductor and compute service run after the 202. */
  async function build(s: TestServer): Promise<void> {
    try {
      const refusal = await scheduleOn(o.ironicUrl, s.nodeUuid!);
      if (refusal) throw new BuildFailure(refusal);
      touch(s, { taskState: "spawning" });
      await spawn(
        o.ironicUrl,
        {
          nodeUuid: s.nodeUuid!,
          serverId: s.id,
          name: s.name,
          imageId: s.imageId,
          flavor: s.flavor,
          userData: s.userData,
        },
        pollMs,
      );
      if (s.deleting) return;
      touch(s, { status: "ACTIVE", vmState: "active", taskState: null });
      try {
        await onActive?.(s);
      } catch (err) {
        bootErrors.push(err as Error);
      }
    } catch (err) {
      const message =
        err instanceof BuildFailure ? err.message : `Build of instance ${s.id} aborted: ${(err as Error).message}`;
      touch(s, { status: "ERROR", vmState: "error", taskState: null, fault: { code: 500, message, created: now() } });
    }
  }

  async function remove(s: TestServer): Promise<void> {
    touch(s, { taskState: "deleting", deleting: true });
    try {
      if (s.nodeUuid && s.fault?.message !== NO_VALID_HOST) await destroy(o.ironicUrl, s.nodeUuid, s.id, pollMs);
      servers.delete(s.id);
    } catch (err) {
      touch(s, { taskState: null, deleting: false, status: "ERROR", vmState: "error" });
      s.fault = { code: 500, message: (err as Error).message, created: now() };
    }
  }

  function create(body: unknown, version: string): { status: number; body: unknown; location: string } {
    const server = (body as { server?: Record<string, unknown> } | null)?.server;
    if (!server || typeof server !== "object")
      throw new HttpFault(400, "Invalid input for field/attribute server. Value: None. None is not of type 'object'");
    const allowed = new Set([
      "name",
      "imageRef",
      "flavorRef",
      "key_name",
      "networks",
      "metadata",
      "user_data",
      "adminPass",
      "security_groups",
      "availability_zone",
      "config_drive",
      "OS-DCF:diskConfig",
      "accessIPv4",
      "accessIPv6",
      "description",
      "tags",
    ]);
    if (cmp(parseVersion(version)!, [2, 74]) >= 0) allowed.add("hypervisor_hostname").add("host");
    const unexpected = Object.keys(server).filter((k) => !allowed.has(k));
    if (unexpected.length)
      throw new HttpFault(
        400,
        `Additional properties are not allowed (${unexpected.map((k) => `'${k}'`).join(", ")} ${unexpected.length > 1 ? "were" : "was"} unexpected)`,
      );
    for (const field of ["name", "flavorRef"])
      if (typeof server[field] !== "string" || !server[field].trim())
        throw new HttpFault(400, `Invalid input for field/attribute ${field}. Value: ${String(server[field])}.`);
    const flavor = flavors.find((f) => f.id === server.flavorRef);
    if (!flavor) throw new HttpFault(400, `Flavor ${String(server.flavorRef)} could not be found.`);
    const image = images.find((i) => i.id === server.imageRef);
    if (!image) throw new HttpFault(400, `Image ${String(server.imageRef)} could not be found.`);
    if (server.key_name !== undefined && !keypairs.has(String(server.key_name)))
      throw new HttpFault(400, "Invalid key_name provided.");
    const nets = server.networks as { uuid?: string }[] | undefined;
    if (!Array.isArray(nets) || nets.length !== 1 || !networks.some((n) => n.id === nets[0]?.uuid))
      throw new HttpFault(400, `Network ${String(Array.isArray(nets) ? nets[0]?.uuid : nets)} could not be found.`);
    const userData = server.user_data as string | undefined;
    if (
      userData !== undefined &&
      (typeof userData !== "string" || Buffer.from(userData, "base64").toString("base64") !== userData)
    )
      throw new HttpFault(
        400,
        "Invalid input for field/attribute user_data. Value: <user_data>. 'user_data' is not a 'base64'",
      );
    const host = server.hypervisor_hostname as string | undefined;
    if (host !== undefined && !UUID.test(host)) throw new HttpFault(400, `Compute host ${host} could not be found.`);
    const id = randomUUID();
    const s: TestServer = {
      id,
      name: server.name as string,
      status: "BUILD",
      taskState: "scheduling",
      vmState: "building",
      nodeUuid: host ?? null,
      imageId: image.id,
      flavor,
      keyName: String(server.key_name ?? ""),
      networkId: nets[0]!.uuid!,
      userData,
      metadata: (server.metadata as Record<string, string> | undefined) ?? {},
      fault: undefined,
      created: now(),
      updated: now(),
      deleting: false,
      locked: false,
    };
    servers.set(id, s);
    // Without a host the scheduler would pick one by the flavor's resources; the tests always name the node.
    if (s.nodeUuid) void build(s);
    else
      touch(s, {
        status: "ERROR",
        vmState: "error",
        taskState: null,
        fault: { code: 500, message: NO_VALID_HOST, created: now() },
      });
    return {
      status: 202,
      location: links("servers", id)[0]!.href,
      body: {
        server: {
          "OS-DCF:diskConfig": "MANUAL",
          adminPass: randomUUID().slice(0, 12),
          id,
          links: links("servers", id),
          security_groups: [{ name: "default" }],
        },
      },
    };
  }

  function route(method: string, path: string, query: URLSearchParams, body: unknown, version: string) {
    const notFound = () => new HttpFault(404, "The resource could not be found.");
    const serverOf = (id: string) => {
      const s = servers.get(id);
      if (!s) throw new HttpFault(404, `Instance ${id} could not be found.`);
      return s;
    };
    if (path === "/servers" && method === "POST") return create(body, version);
    if ((path === "/servers/detail" || path === "/servers") && method === "GET") {
      const pattern = query.get("name");
      const re = pattern === null ? null : new RegExp(pattern);
      const list = [...servers.values()].filter((s) => !re || re.test(s.name));
      return {
        status: 200,
        body: {
          servers: list.map((s) =>
            path === "/servers" ? { id: s.id, name: s.name, links: links("servers", s.id) } : show(s),
          ),
        },
      };
    }
    const m = /^\/servers\/([^/]+)$/.exec(path);
    if (m && method === "GET") return { status: 200, body: { server: show(serverOf(decodeURIComponent(m[1]!))) } };
    const action = /^\/servers\/([^/]+)\/action$/.exec(path);
    if (action && method === "POST") {
      const s = serverOf(decodeURIComponent(action[1]!));
      const verb = Object.keys((body as object | undefined) ?? {})[0];
      if (verb !== "lock" && verb !== "unlock") throw new HttpFault(400, `There is no such action: ${String(verb)}`);
      touch(s, { locked: verb === "lock" });
      return { status: 202, body: undefined };
    }
    if (m && method === "DELETE") {
      const s = serverOf(decodeURIComponent(m[1]!));
      if (s.locked) throw new HttpFault(409, `Instance ${s.id} is locked`);
      if (!s.deleting) void remove(s);
      return { status: 204, body: undefined };
    }
    if ((path === "/flavors" || path === "/flavors/detail") && method === "GET")
      return {
        status: 200,
        body: {
          flavors: flavors.map((f) => ({
            id: f.id,
            name: f.name,
            description: null,
            links: links("flavors", f.id),
            ...(path === "/flavors/detail"
              ? {
                  vcpus: f.vcpus,
                  ram: f.ram,
                  disk: f.disk,
                  "OS-FLV-EXT-DATA:ephemeral": 0,
                  swap: 0,
                  extra_specs: f.extraSpecs,
                }
              : {}),
          })),
        },
      };
    throw notFound();
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers });
    res.end(body !== undefined ? JSON.stringify(body) : undefined);
  };

  const http: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      const url = new URL(req.url!, "http://nova");
      let version = NOVA_MIN_VERSION;
      try {
        version = requestedVersion(req);
        const headers = {
          "openstack-api-version": `compute ${version}`,
          "x-openstack-nova-api-version": version,
          vary: "OpenStack-API-Version, X-OpenStack-Nova-API-Version",
        };
        requests.push({ method: req.method!, path: url.pathname, version });
        if (!url.pathname.startsWith("/v2.1/")) throw new HttpFault(404, "The resource could not be found.");
        let body: unknown;
        if (raw) {
          try {
            body = JSON.parse(raw);
          } catch {
            throw new HttpFault(400, "Malformed request body");
          }
        }
        const out = route(req.method!, url.pathname.slice("/v2.1".length), url.searchParams, body, version);
        send(res, out.status, out.body, { ...headers, ...("location" in out ? { location: out.location } : {}) });
      } catch (err) {
        const status = err instanceof HttpFault ? err.status : 500;
        const message =
          err instanceof HttpFault
            ? err.message
            : "Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.";
        send(res, status, { [FAULT_NAMES[status] ?? "computeFault"]: { code: status, message } });
      }
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  return {
    url: `${base}/v2.1`,
    root: base,
    servers,
    requests,
    bootErrors,
    setOnActive: (fn) => {
      onActive = fn;
    },
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
