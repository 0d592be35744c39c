/**
 * A Redfish BMC for tests (`@fm/test-support/redfish`): an HTTP server speaking the DMTF Redfish
 * wire format (DSP0266), serving the resources of DMTF's public-rackmount1 mock-up (./mockup/,
 * SOURCES.md beside it) with the parts real Ironic's `redfish` driver (python3-sushy 4.3.3) uses
 * alive: HTTP Basic and session (X-Auth-Token) authentication, the system's power state through
 * ComputerSystem.Reset, and the boot source override through PATCH of the system's Boot.
 *
 * Failure modes as a real BMC shows them: a wrong password is a 401 (sessions and Basic alike),
 * and stop() closes the port, so the BMC is unreachable. Several BMCs can share one port on
 * different loopback addresses (127.0.0.2, 127.0.0.3, ...), one per device, as on a real
 * management network.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { loadMockup, SYSTEM_ID, SYSTEM_PATH } from "./mockup.ts";

export { SYSTEM_ID, SYSTEM_PATH };

export interface RedfishBmcOptions {
  username: string;
  password: string;
  /** Listen address (any 127.0.0.0/8 address works on Linux without configuration). */
  host?: string;
  /** 0 (default): the OS picks one. */
  port?: number;
  /** The system's power state at start (the mock-up says On). */
  powerState?: "On" | "Off";
  /** Serve HTTPS with this certificate and key (PEM), as real BMCs do (see ./certificate.ts). */
  tls?: { cert: string; key: string };
  /**
   * The system's host Ethernet interfaces (its EthernetInterfaces collection), instead of the
   * mock-up's two: each built from the mock-up's `12446A3B0411` resource
   * (`EthernetInterface.v1_9_0`) with this `Id` and this MAC as `MACAddress` and
   * `PermanentMACAddress`, so each device's BMC reports its own NICs.
   */
  ethernetInterfaces?: { id: string; mac: string }[];
  /**
   * Called after each accepted ComputerSystem.Reset, once PowerState has changed: the host behind
   * the BMC (../ipa/machine.ts) boots, reboots or stops. `from` and `to` are the power states
   * before and after; a restart type on a system that is On has both On.
   */
  onReset?: (e: { resetType: string; from: "On" | "Off"; to: "On" | "Off" }) => void;
}

export interface RedfishRequest {
  method: string;
  path: string;
  /** How the request authenticated: none needed (service root), basic, session, or rejected (401). */
  auth: "none" | "basic" | "session" | "rejected";
}

export interface RedfishBmc {
  /** Base URL, e.g. http://127.0.0.2:41234 or https://… (what Ironic's redfish_address takes). */
  url: string;
  host: string;
  port: number;
  /** The system's live state: PowerState and Boot as a client last set them. */
  system: { PowerState: "On" | "Off"; Boot: Record<string, unknown> };
  /** Every ResetType posted to ComputerSystem.Reset, in order. */
  resets: string[];
  requests: RedfishRequest[];
  /** Closes the port (the BMC becomes unreachable). */
  stop(): Promise<void>;
}

/** ResetType → resulting PowerState (Redfish ResetType enum, DSP0268 ComputerSystem.Reset). */
const RESET_RESULT: Record<string, "On" | "Off"> = {
  On: "On",
  ForceOn: "On",
  ForceOff: "Off",
  GracefulShutdown: "Off",
  GracefulRestart: "On",
  ForceRestart: "On",
  PowerCycle: "On",
  Nmi: "On",
  PushPowerButton: "On",
};

/** A Redfish error body (DSP0266 "Error responses"; message ids from the Base registry). */
function redfishError(status: number, messageId: string, message: string) {
  return {
    status,
    body: {
      error: {
        code: `Base.1.8.${messageId}`,
        message,
        "@Message.ExtendedInfo": [
          {
            "@odata.type": "#Message.v1_1_1.Message",
            MessageId: `Base.1.8.${messageId}`,
            Message: message,
            Severity: "Critical",
            Resolution: "None",
          },
        ],
      },
    },
  };
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

export async function startRedfishBmc(opts: RedfishBmcOptions): Promise<RedfishBmc> {
  const resources = loadMockup();
  if (opts.ethernetInterfaces) setEthernetInterfaces(resources, opts.ethernetInterfaces);
  const template = resources.get(SYSTEM_PATH) as Record<string, unknown> & { Boot: Record<string, unknown> };
  const system: RedfishBmc["system"] = {
    PowerState: opts.powerState ?? "On",
    Boot: structuredClone(template.Boot),
  };
  const allowedTargets = template.Boot["BootSourceOverrideTarget@Redfish.AllowableValues"] as string[];
  const sessions = new Map<string, string>();
  const resets: string[] = [];
  const requests: RedfishRequest[] = [];

  const systemBody = () => ({ ...template, PowerState: system.PowerState, Boot: system.Boot });
  const etagOf = (body: unknown) =>
    `W/"${createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 16)}"`;

  const authOf = (req: IncomingMessage): RedfishRequest["auth"] => {
    const token = req.headers["x-auth-token"];
    if (typeof token === "string" && sessions.has(token)) return "session";
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
    if (basic) {
      const [user, ...rest] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":");
      if (user === opts.username && rest.join(":") === opts.password) return "basic";
    }
    return "rejected";
  };

  const handle = (req: IncomingMessage, path: string, body: unknown): Reply & { auth: RedfishRequest["auth"] } => {
    // DSP0266: the service root (and /redfish) answers without authentication; so does session login.
    if (req.method === "GET" && path === "/redfish") return { auth: "none", status: 200, body: { v1: "/redfish/v1/" } };
    if (req.method === "GET" && path === "/redfish/v1") return { auth: "none", status: 200, body: resources.get(path) };
    if (req.method === "POST" && path === "/redfish/v1/SessionService/Sessions") {
      const b = (body ?? {}) as { UserName?: unknown; Password?: unknown };
      if (b.UserName !== opts.username || b.Password !== opts.password)
        return { auth: "rejected", ...redfishError(401, "NoValidSession", "Invalid username or password.") };
      const id = randomBytes(8).toString("hex");
      const token = randomBytes(24).toString("hex");
      sessions.set(token, id);
      const location = `/redfish/v1/SessionService/Sessions/${id}`;
      return {
        auth: "none",
        status: 201,
        headers: { "X-Auth-Token": token, Location: location },
        body: {
          "@odata.type": "#Session.v1_6_0.Session",
          "@odata.id": location,
          Id: id,
          Name: "User Session",
          UserName: opts.username,
        },
      };
    }
    const auth = authOf(req);
    if (auth === "rejected")
      return {
        auth,
        ...redfishError(401, "NoValidSession", "No valid session or credentials were supplied."),
        headers: { "WWW-Authenticate": 'Basic realm="Redfish"' },
      };
    return { auth, ...authorised(req, path, body) };
  };

  const authorised = (req: IncomingMessage, path: string, body: unknown): Reply => {
    if (req.method === "GET") {
      if (path === SYSTEM_PATH) {
        const b = systemBody();
        return { status: 200, body: b, headers: { ETag: etagOf(b) } };
      }
      if (path === "/redfish/v1/SessionService/Sessions")
        return {
          status: 200,
          body: {
            ...(resources.get(path) as object),
            Members: [...sessions.values()].map((id) => ({ "@odata.id": `${path}/${id}` })),
            "Members@odata.count": sessions.size,
          },
        };
      const found = resources.get(path);
      return found
        ? { status: 200, body: found }
        : redfishError(404, "ResourceMissingAtURI", `The resource at the URI ${path} was not found.`);
    }
    if (req.method === "DELETE" && path.startsWith("/redfish/v1/SessionService/Sessions/")) {
      const id = path.slice(path.lastIndexOf("/") + 1);
      for (const [token, sid] of sessions) if (sid === id) sessions.delete(token);
      return { status: 204 };
    }
    if (req.method === "PATCH" && path === SYSTEM_PATH) {
      const ifMatch = req.headers["if-match"];
      if (ifMatch && ifMatch !== "*" && ifMatch.replace(/^W\//, "") !== etagOf(systemBody()).replace(/^W\//, ""))
        return redfishError(412, "PreconditionFailed", "The ETag supplied did not match the ETag required.");
      const boot = (body as { Boot?: Record<string, unknown> } | undefined)?.Boot;
      if (!boot || typeof boot !== "object")
        return redfishError(400, "PropertyMissing", "The property Boot is a required property.");
      const target = boot.BootSourceOverrideTarget;
      if (target !== undefined && !allowedTargets.includes(String(target)))
        return redfishError(
          400,
          "PropertyValueNotInList",
          `The value ${String(target)} for the property BootSourceOverrideTarget is not in the list of acceptable values.`,
        );
      system.Boot = { ...system.Boot, ...boot };
      return { status: 204 };
    }
    if (req.method === "POST" && path === `${SYSTEM_PATH}/Actions/ComputerSystem.Reset`) {
      const type = (body as { ResetType?: unknown } | undefined)?.ResetType;
      const next = typeof type === "string" ? RESET_RESULT[type] : undefined;
      if (!next)
        return redfishError(
          400,
          "ActionParameterValueNotInList",
          `The value ${String(type)} for the parameter ResetType is not in the list of acceptable values.`,
        );
      resets.push(type as string);
      const from = system.PowerState;
      system.PowerState = next;
      opts.onReset?.({ resetType: type as string, from, to: next });
      return { status: 204 };
    }
    return redfishError(405, "OperationNotAllowed", `${req.method} is not allowed on ${path}.`);
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://bmc").pathname.replace(/\/+$/, "") || "/";
      let body: unknown;
      let reply: Reply & { auth: RedfishRequest["auth"] };
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
        reply = handle(req, path, body);
      } catch {
        reply = {
          auth: "none",
          ...redfishError(400, "MalformedJSON", "The request body submitted was malformed JSON."),
        };
      }
      requests.push({ method: req.method ?? "GET", path, auth: reply.auth });
      const text = reply.body === undefined ? "" : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        ...(text ? { "Content-Type": "application/json; charset=utf-8" } : {}),
        "OData-Version": "4.0",
        ...reply.headers,
      });
      res.end(text);
    });
  };
  const server: Server = opts.tls ? createTlsServer(opts.tls, listener) : createServer(listener);
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  let stopping: Promise<void> | undefined;
  return {
    url: `${opts.tls ? "https" : "http"}://${host}:${port}`,
    host,
    port,
    system,
    resets,
    requests,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** Replaces the system's EthernetInterfaces members with `nics`, each from the mock-up's first NIC. */
function setEthernetInterfaces(resources: Map<string, unknown>, nics: { id: string; mac: string }[]): void {
  const collectionPath = `${SYSTEM_PATH}/EthernetInterfaces`;
  const collection = resources.get(collectionPath) as { Members: { "@odata.id": string }[] };
  const template = resources.get(`${collectionPath}/12446A3B0411`) as Record<string, unknown>;
  for (const m of collection.Members) resources.delete(m["@odata.id"].replace(/\/+$/, ""));
  collection.Members = nics.map((n) => ({ "@odata.id": `${collectionPath}/${n.id}` }));
  (collection as Record<string, unknown>)["Members@odata.count"] = nics.length;
  for (const n of nics)
    resources.set(`${collectionPath}/${n.id}`, {
      ...structuredClone(template),
      Id: n.id,
      Description: `System NIC ${n.id}`,
      MACAddress: n.mac,
      PermanentMACAddress: n.mac,
      "@odata.id": `${collectionPath}/${n.id}`,
    });
}
