import { randomUUID } from "node:crypto";
import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Forbidden, Unauthorized } from "@fm/domain";
import { hasScope, type Principal } from "../lib/context.ts";

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a well-formed X-Request-Id from the caller (or a proxy), otherwise makes one. */
export function genReqId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/**
 * Resolves the caller of a request. Returns undefined when the request carries no
 * credentials; throws Unauthorized when they are invalid.
 */
export type Authenticator = (request: FastifyRequest) => Promise<Principal | undefined>;

/**
 * The authenticator of `FM_AUTH=none` (local development on a loopback address) and of tests of
 * other features: every caller is the local operator with every scope, recorded as `local`.
 */
export const localAuthenticator: Authenticator = async () => ({
  id: "local",
  kind: "local",
  scopes: new Set(["fleet.read", "fleet.operate", "fleet.admin"]),
});

export interface RequestContextOptions {
  authenticate: Authenticator;
}

/**
 * Builds request.ctx (request id, principal, logger) and enforces the scope each route
 * declares in its `config.scope`. Routes without a declaration are reachable by anyone:
 * only the operational endpoints (/healthz, /readyz, /metrics, /docs) are like that.
 */
export const requestContextPlugin = fp<RequestContextOptions>(
  async (app: FastifyInstance, opts) => {
    app.decorateRequest("ctx", null as never);
    app.addHook("onRequest", async (request, reply) => {
      reply.header("x-request-id", request.id);
      request.ctx = { requestId: request.id, principal: ANONYMOUS, log: request.log };
    });
    // Before the body is even read: a caller without access cannot make the hub parse a large
    // body (reflections accept 64 MiB), and learns nothing about what a valid request is.
    app.addHook("onRequest", async (request) => {
      const scope = request.routeOptions.config?.scope;
      if (!scope || scope === "public") return;
      const principal = await opts.authenticate(request);
      if (!principal) throw new Unauthorized("unauthenticated", "This route needs a bearer token");
      request.ctx.principal = principal;
      request.ctx.log = request.log.child({ principal: principal.id });
      if (!hasScope(principal, scope)) {
        throw new Forbidden("insufficient_scope", `This route needs the ${scope} scope`);
      }
    });
  },
  { name: "request-context" },
);

const ANONYMOUS: Principal = { id: "anonymous", kind: "local", scopes: new Set() };
