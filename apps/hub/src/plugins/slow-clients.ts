/**
 * What a slow or greedy client can hold (issue 33, finding 5): a request's headers and body must
 * arrive in time, and the connections a client may keep open are capped overall and per address.
 *
 * - Headers: Node's `headersTimeout`, FM_REQUEST_TIMEOUT_S.
 * - Body: a timer from the moment the headers are parsed; a body still arriving after
 *   FM_REQUEST_TIMEOUT_S is answered `408 request_timeout` and its connection closed. A route
 *   declaring `config.slowBody` (the reflection push: up to 64 MiB from a satellite's uplink) gets
 *   FM_REFLECTION_REQUEST_TIMEOUT_S instead, once its caller has been authenticated (a caller the
 *   route refuses keeps the short timeout).
 * - The whole request: Node's `requestTimeout`, FM_REFLECTION_REQUEST_TIMEOUT_S, the ceiling for
 *   every route.
 * - Connections: Node's `maxConnections` (FM_MAX_CONNECTIONS), and FM_MAX_CONNECTIONS_PER_ADDRESS
 *   per peer address; a connection over either is closed as it is accepted. A trusted proxy
 *   (FM_TRUST_PROXY) carries every caller behind it, so its connections count only overall.
 *
 * Node checks its two timeouts every `connectionsCheckingInterval`; the hub sets that to a tenth of
 * the header timeout (at most 5 s), so a timeout fires within that much of its due time.
 */
import type { Server } from "node:http";
import { BlockList, isIP } from "node:net";
import type { Socket } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Counter, type Registry } from "prom-client";
import { clientErrorHandler } from "./problem.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The body may take FM_REFLECTION_REQUEST_TIMEOUT_S to arrive once the caller is authenticated (reflection pushes). */
    slowBody?: boolean;
  }
}

export interface SlowClientLimits {
  /** Headers, and then the body of a route without `slowBody`, must arrive within this, ms. */
  requestTimeoutMs: number;
  /** The body of a `slowBody` route, and any whole request, must arrive within this, ms. */
  slowBodyTimeoutMs: number;
  /** Open connections at most (Node's maxConnections). */
  maxConnections: number;
  /** Open connections at most from one peer address, trusted proxies excepted. */
  maxConnectionsPerAddress: number;
  /** Peer addresses and CIDRs of the proxies whose X-Forwarded-For the hub believes (FM_TRUST_PROXY). */
  trustedProxies: readonly string[];
}

export const DEFAULT_SLOW_CLIENT_LIMITS: SlowClientLimits = {
  requestTimeoutMs: 30_000,
  slowBodyTimeoutMs: 600_000,
  maxConnections: 4096,
  maxConnectionsPerAddress: 256,
  trustedProxies: [],
};

/** The Node HTTP server options the limits need at its creation (Fastify's `http` option). */
export function httpServerOptions(limits: SlowClientLimits) {
  return {
    headersTimeout: limits.requestTimeoutMs,
    requestTimeout: limits.slowBodyTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(5_000, Math.floor(limits.requestTimeoutMs / 10))),
  };
}

/** `::ffff:10.0.0.1` is 10.0.0.1. */
const plainAddress = (address: string) => (address.startsWith("::ffff:") ? address.slice(7) : address);

/** A matcher of the trusted proxy list (addresses and CIDRs, IPv4 or IPv6). */
export function proxyMatcher(list: readonly string[]): (address: string) => boolean {
  if (list.length === 0) return () => false;
  const blocks = new BlockList();
  for (const entry of list) {
    const [ip, bits] = entry.split("/") as [string, string | undefined];
    const type = isIP(ip) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) blocks.addAddress(ip, type);
    else blocks.addSubnet(ip, Number(bits), type);
  }
  return (address) => {
    const a = plainAddress(address);
    const type = isIP(a);
    return type !== 0 && blocks.check(a, type === 6 ? "ipv6" : "ipv4");
  };
}

/** Installs the connection caps on the server and the body timers on every request. */
export function slowClientGuard(app: FastifyInstance, limits: SlowClientLimits, registry: Registry): void {
  const refused = new Counter({
    name: "fleet_manager_http_connections_refused_total",
    help: "connections closed as they were accepted: over FM_MAX_CONNECTIONS (overall) or FM_MAX_CONNECTIONS_PER_ADDRESS (address)",
    labelNames: ["limit"],
    registers: [registry],
  });
  const timedOut = new Counter({
    name: "fleet_manager_http_request_body_timeouts_total",
    help: "requests whose body had not arrived within its timeout (FM_REQUEST_TIMEOUT_S, FM_REFLECTION_REQUEST_TIMEOUT_S)",
    registers: [registry],
  });
  refused.inc({ limit: "overall" }, 0);
  refused.inc({ limit: "address" }, 0);

  const server: Server = app.server;
  server.maxConnections = limits.maxConnections;
  server.on("drop", () => refused.inc({ limit: "overall" }));
  const trusted = proxyMatcher(limits.trustedProxies);
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = plainAddress(socket.remoteAddress ?? "");
    if (trusted(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.maxConnectionsPerAddress) {
      refused.inc({ limit: "address" });
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });

  const timers = new WeakMap<FastifyRequest, NodeJS.Timeout>();
  const arm = (request: FastifyRequest, reply: FastifyReply, ms: number) => {
    clearTimeout(timers.get(request));
    const raw = request.raw;
    const timer = setTimeout(() => {
      const socket = raw.socket as Socket | null;
      // (An injected request, light-my-request's, has a stand-in socket with nothing to close.)
      if (raw.complete || !socket || socket.destroyed || typeof socket.destroy !== "function") return;
      timedOut.inc();
      request.log.warn({ timeoutMs: ms }, "request body not received in time: connection closed");
      // A response already begun (a refusal before the body was read): nothing more to say.
      if (reply.raw.headersSent) socket.destroy();
      else
        clientErrorHandler(Object.assign(new Error("request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" }), socket);
    }, ms);
    timers.set(request, timer);
    const clear = () => clearTimeout(timer);
    raw.once("end", clear);
    raw.once("close", clear);
  };
  app.addHook("onRequest", async (request, reply) => {
    if (!request.raw.complete) arm(request, reply, limits.requestTimeoutMs);
  });
  // After onRequest, so after authentication: only a caller the route accepts gets the long time.
  app.addHook("preParsing", async (request, reply, payload) => {
    if (request.routeOptions.config?.slowBody && !request.raw.complete) arm(request, reply, limits.slowBodyTimeoutMs);
    return payload;
  });
}
