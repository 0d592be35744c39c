import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import { clientErrorHandler, frameworkErrors, problemPlugin } from "./plugins/problem.ts";
import { installJsonParser } from "./plugins/json-body.ts";
import { textInputPlugin } from "./plugins/text-input.ts";
import { genReqId, requestContextPlugin } from "./plugins/request-context.ts";
import { metricsPlugin, createRegistry } from "./plugins/metrics.ts";
import { openapiPlugin } from "./plugins/openapi.ts";
import { idempotencyPlugin } from "./plugins/idempotency.ts";
import {
  DEFAULT_SLOW_CLIENT_LIMITS,
  httpServerOptions,
  slowClientGuard,
  type SlowClientLimits,
} from "./plugins/slow-clients.ts";
import { TRACE_ID_FIELD } from "@fm/domain";
import { PgListener } from "./lib/pg-listener.ts";
import { traceIdOf } from "./lib/trace.ts";
import type { FeedRetention } from "./modules/feed/retention.ts";
import {
  createIssuerDiscovery,
  createOAuthAuthenticator,
  createPersonTokenVerifier,
  type IdentityConfig,
} from "./modules/identity/authenticator.ts";
import { ClientCache } from "./modules/identity/client-cache.ts";
import { KeyStore, keyStoreMetrics } from "./modules/identity/keystore.ts";
import { type SatelliteService } from "./modules/satellites/service.ts";
import { webSessionRepo } from "./modules/web-session/repo.ts";
import { sessionRequestOf } from "./modules/web-session/routes.ts";
import { createWebSessionService, type WebSessionService } from "./modules/web-session/service.ts";

import { registerModules } from "./wiring.ts";
import type { AppDeps } from "./app-deps.ts";

export type { AppDeps, IdentityDeps } from "./app-deps.ts";

export interface RouteInfo {
  method: string;
  url: string;
  scope: string | undefined;
  summary: string | undefined;
  /** The OpenAPI operationId, declared with the route's schema: what generated clients name the method. */
  operationId: string | undefined;
}

declare module "fastify" {
  interface FastifyInstance {
    routeTable: RouteInfo[];
    identity: { config: IdentityConfig; keystore: KeyStore; clients: ClientCache; satellites: SatelliteService };
    /** The feed's retention purge (tests run it on demand). */
    feedRetention: FeedRetention;
  }
}

/** Every route with its declared scope: checked by a test, and the source of the table of routes in docs/api.md. */
function collectRouteTable(app: FastifyInstance): void {
  const routeTable: RouteInfo[] = [];
  app.addHook("onRoute", (r) => {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) {
      if (method !== "HEAD")
        routeTable.push({
          method,
          url: r.url,
          scope: r.config?.scope,
          summary: r.schema?.summary,
          operationId: r.schema?.operationId,
        });
    }
  });
  app.decorate("routeTable", routeTable);
}

/** Builds the hub: plugins first, then one register call per feature module. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits: SlowClientLimits = { ...DEFAULT_SLOW_CLIENT_LIMITS, ...deps.slowClients };
  const app = Fastify({
    // Not redundant, whatever the rule says: it makes Fastify infer FastifyBaseLogger, not pino's Logger.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId,
    logController: new LogController({ requestIdLogLabel: "requestId" }),
    // Every line a request logs carries its trace id, from Fastify's "incoming request" on.
    childLoggerFactory: (logger, bindings, opts, raw) =>
      logger.child({ ...bindings, [TRACE_ID_FIELD]: traceIdOf(raw) }, opts),
    bodyLimit: deps.bodyLimitBytes ?? 16 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // Keep-alive connections that are idle are closed at shutdown; busy ones finish first.
    forceCloseConnections: "idle",
    return503OnClosing: true,
    // Slow headers and bodies (plugins/slow-clients.ts): Node's checks, the body timers below.
    http: httpServerOptions(limits),
    requestTimeout: limits.slowBodyTimeoutMs,
    // request.ip is X-Forwarded-For's last untrusted hop when the peer is a trusted proxy.
    trustProxy: limits.trustedProxies.length > 0 ? [...limits.trustedProxies] : false,
    // Errors before any route, and from Node's HTTP parser: problem+json too.
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // The API speaks JSON only: any other body is 415, not a string for the validator to reject.
  app.removeContentTypeParser("text/plain");
  installJsonParser(app);
  collectRouteTable(app);

  await app.register(problemPlugin);
  await app.register(textInputPlugin);
  const idc = deps.identity.config;
  const registry = deps.registry ?? createRegistry();
  // Before authentication's hooks: a body's time counts from its headers.
  slowClientGuard(app, limits, registry);
  const keystore = new KeyStore(deps.prisma, deps.identity.kek, idc.tokenLifetimeS * 1000, keyStoreMetrics(registry));
  const listener = new PgListener(deps.pool, app.log);
  app.addHook("onReady", () => listener.start());
  app.addHook("preClose", () => listener.close());
  const clients = new ClientCache(deps.prisma, listener);
  keystore.follow(listener, app.log);
  app.addHook("onReady", () => keystore.load());
  // People log in to the web UI through the hub, which holds their tokens (modules/web-session);
  // a request with an Authorization header is a bearer token's, whatever cookie it carries.
  const discoverPeopleIssuer = idc.external && createIssuerDiscovery(idc.external.issuer);
  const verifyPerson = idc.external && createPersonTokenVerifier(idc.external, discoverPeopleIssuer);
  const webSessions: WebSessionService | undefined =
    deps.webUi && idc.external && verifyPerson && discoverPeopleIssuer && !deps.authenticate
      ? createWebSessionService({
          prisma: deps.prisma,
          repo: webSessionRepo,
          kek: deps.identity.kek,
          people: { issuer: idc.external.issuer, discover: discoverPeopleIssuer, verify: verifyPerson },
          config: {
            clientId: deps.webUi.clientId,
            idleS: deps.webUi.sessionIdleS ?? 8 * 3600,
            maxS: deps.webUi.sessionMaxS ?? 24 * 3600,
            publicOrigin: idc.issuer ? new URL(idc.issuer).origin : undefined,
          },
        })
      : undefined;
  const bearer = createOAuthAuthenticator(idc, keystore, clients, verifyPerson);
  await app.register(requestContextPlugin, {
    authenticate:
      deps.authenticate ??
      (webSessions
        ? async (request) =>
            request.headers.authorization ? bearer(request) : webSessions.authenticate(sessionRequestOf(request))
        : bearer),
  });
  await app.register(metricsPlugin, { registry });
  await app.register(openapiPlugin, { docsEnabled: deps.docsEnabled ?? true });
  await app.register(idempotencyPlugin, { prisma: deps.prisma, kek: deps.identity.kek });

  // During shutdown (a signal to the process, or app.close()), responses close their connection
  // so keep-alive clients cannot hold the process open until their idle timeout.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  const isShuttingDown = () => closing || (deps.isShuttingDown?.() ?? false);
  app.addHook("onSend", async (_request, reply, payload) => {
    if (isShuttingDown()) reply.header("connection", "close");
    return payload;
  });

  registerModules(app, deps, { keystore, clients, listener, registry, isShuttingDown, webSessions });
  return app;
}
