import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import type { Logger } from "pino";
import type pg from "pg";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import type { PrismaClient } from "./db/client.ts";
import { clientErrorHandler, frameworkErrors, problemPlugin } from "./plugins/problem.ts";
import { installJsonParser } from "./plugins/json-body.ts";
import { textInputPlugin } from "./plugins/text-input.ts";
import { genReqId, requestContextPlugin, type Authenticator } from "./plugins/request-context.ts";
import { metricsPlugin, createRegistry } from "./plugins/metrics.ts";
import { openapiPlugin } from "./plugins/openapi.ts";
import { idempotencyPlugin } from "./plugins/idempotency.ts";
import {
  DEFAULT_SLOW_CLIENT_LIMITS,
  httpServerOptions,
  slowClientGuard,
  type SlowClientLimits,
} from "./plugins/slow-clients.ts";
import {
  DEFAULT_FEED_RETENTION_S,
  DEFAULT_IMPAIRMENT_POLICY,
  DEFAULT_SITE_SILENCE_AFTER_MS,
  DEFAULT_STALE_AFTER_MS,
  EMPTY_NETBOX_SETTINGS,
  TRACE_ID_FIELD,
  type ImageSourcePolicy,
  type ImpairmentPolicy,
  type NetboxSettingsInput,
} from "@fm/domain";
import { PgListener } from "./lib/pg-listener.ts";
import { traceIdOf } from "./lib/trace.ts";
import { auditRepo } from "./modules/audit/repo.ts";
import { registerAudit } from "./modules/audit/routes.ts";
import { createAuditService } from "./modules/audit/service.ts";
import { discrepancyRepo } from "./modules/discrepancies/repo.ts";
import { registerDiscrepancyMetrics } from "./modules/discrepancies/metrics.ts";
import { registerDiscrepancies } from "./modules/discrepancies/routes.ts";
import { createDiscrepancyService } from "./modules/discrepancies/service.ts";
import { deviceRoleRepo } from "./modules/device-roles/repo.ts";
import { registerDeviceRoles } from "./modules/device-roles/routes.ts";
import { createDeviceRoleService } from "./modules/device-roles/service.ts";
import { registerDevices } from "./modules/devices/routes.ts";
import { deviceRepo } from "./modules/devices/repo.ts";
import { createDeviceService } from "./modules/devices/service.ts";
import { FeedNotifier } from "./modules/feed/notifier.ts";
import { feedRepo } from "./modules/feed/repo.ts";
import { FeedSequencer } from "./modules/feed/sequencer.ts";
import { registerFeedMetrics } from "./modules/feed/metrics.ts";
import { FeedRetention } from "./modules/feed/retention.ts";
import { registerFeed } from "./modules/feed/routes.ts";
import { createFeedService } from "./modules/feed/service.ts";
import { createSnapshotService } from "./modules/feed/snapshot.ts";
import { healthRepo } from "./modules/health/repo.ts";
import { registerHealth } from "./modules/health/routes.ts";
import { createHealthService } from "./modules/health/service.ts";
import {
  createIssuerDiscovery,
  createOAuthAuthenticator,
  createPersonTokenVerifier,
  type IdentityConfig,
} from "./modules/identity/authenticator.ts";
import { ClientCache } from "./modules/identity/client-cache.ts";
import { KeyStore, keyStoreMetrics } from "./modules/identity/keystore.ts";
import { identityRepo } from "./modules/identity/repo.ts";
import { registerOAuth, registerSigningKeyRotation, registerWhoAmI } from "./modules/identity/routes.ts";
import { createIdentityService } from "./modules/identity/service.ts";
import { jobRepo } from "./modules/jobs/repo.ts";
import { registerJobs } from "./modules/jobs/routes.ts";
import { createJobService } from "./modules/jobs/service.ts";
import { reflectionRepo } from "./modules/reflections/repo.ts";
import { netboxSettingsRepo } from "./modules/netbox-settings/repo.ts";
import { registerNetboxSettings } from "./modules/netbox-settings/routes.ts";
import { createNetboxSettingsService } from "./modules/netbox-settings/service.ts";
import { registerReflections } from "./modules/reflections/routes.ts";
import { createReflectionService } from "./modules/reflections/service.ts";
import { satelliteRepo } from "./modules/satellites/repo.ts";
import { registerSatellites } from "./modules/satellites/routes.ts";
import { registerClients } from "./modules/clients/routes.ts";
import { clientRepo } from "./modules/clients/repo.ts";
import { createClientService } from "./modules/clients/service.ts";
import { createSatelliteService, type SatelliteService } from "./modules/satellites/service.ts";
import { registerSiteMetrics } from "./modules/sites/metrics.ts";
import { siteRepo } from "./modules/sites/repo.ts";
import { registerSites } from "./modules/sites/routes.ts";
import { createSiteService } from "./modules/sites/service.ts";
import { slurmBootstrapRepo } from "./modules/slurm-bootstrap/repo.ts";
import { registerSlurmBootstrap } from "./modules/slurm-bootstrap/routes.ts";
import { createSlurmBootstrapService } from "./modules/slurm-bootstrap/service.ts";
import { topologyRepo } from "./modules/topology/repo.ts";
import { registerTopology } from "./modules/topology/routes.ts";
import { createTopologyService } from "./modules/topology/service.ts";
import { registerWebUi } from "./modules/web-ui/routes.ts";
import { createWebUiService, type WebUiConfig } from "./modules/web-ui/service.ts";
import { webSessionRepo } from "./modules/web-session/repo.ts";
import { registerWebSession, sessionRequestOf } from "./modules/web-session/routes.ts";
import { createWebSessionService, type WebSessionService } from "./modules/web-session/service.ts";

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

export interface IdentityDeps {
  config: IdentityConfig;
  /** 32-byte key encryption key for the signing keys at rest. */
  kek: Buffer;
  rotationOverlapMs?: number;
  tokenRateLimitPerMinute?: number;
}

export interface AppDeps {
  prisma: PrismaClient;
  /** The pool behind `prisma`: the feed holds one connection of it to LISTEN for commits. */
  pool?: pg.Pool;
  logger: Logger;
  /** A source that has not observed a device for this long makes it STALE (default 10 min). */
  staleAfterMs?: number;
  /**
   * The NetBox settings of the hub's configuration (FM_NETBOX_DEVICE_FILTERS,
   * FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING), applied when the app is ready if they differ from the
   * configuration applied last; the admin API changes them in between.
   */
  netboxSettings?: NetboxSettingsInput;
  /** A source that has not pushed for a site for this long makes the site's Reporting condition False (default 10 min, the staleness window). */
  siteSilenceAfterMs?: number;
  /** Impairment cordon and release (health critical too long); default 10 min / 30 min / 10 %. */
  impairment?: ImpairmentPolicy;
  /** What an IMAGE_NODE job's image may be (FM_IMAGE_ALLOW_HTTP, FM_IMAGE_HOSTS); default https only, any public host. */
  imagePolicy?: ImageSourcePolicy;
  /** Feed events older than this are purged (default 7 days), and how often to purge (default 1 min). */
  feedRetention?: { retentionMs: number; intervalMs?: number; now?: () => Date };
  /** Longest an inventory snapshot may stream (default 10 min). */
  snapshotTimeoutMs?: number;
  /** Inventory snapshots streaming at once (default: a quarter of the connection pool). */
  snapshotMaxConcurrent?: number;
  /** How long a snapshot's reader may take nothing before the snapshot is cut short (default 60 s). */
  snapshotStallMs?: number;
  bodyLimitBytes?: number;
  /**
   * Request timeouts, connection caps and trusted proxies (FM_REQUEST_TIMEOUT_S,
   * FM_REFLECTION_REQUEST_TIMEOUT_S, FM_MAX_CONNECTIONS, FM_MAX_CONNECTIONS_PER_ADDRESS,
   * FM_TRUST_PROXY); plugins/slow-clients.ts has the defaults.
   */
  slowClients?: Partial<SlowClientLimits>;
  readinessTimeoutMs?: number;
  docsEnabled?: boolean;
  /** The operators' web UI at /ui/ (the built SPA's folder, and the OIDC client it logs people in as). */
  webUi?: Pick<WebUiConfig, "dir" | "clientId"> & {
    /** A web login ends after this long without a request (default 8 h) and this long after it began (default 24 h). */
    sessionIdleS?: number;
    sessionMaxS?: number;
  };
  registry?: Registry;
  identity: IdentityDeps;
  /** Replaces the OAuth2 bearer-token authenticator (tests of other features; FM_AUTH=none). */
  authenticate?: Authenticator;
  /** Lets main() flip /readyz to 503 as soon as shutdown starts. */
  isShuttingDown?: () => boolean;
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

/** What the plugins set up and the modules share. */
interface Shared {
  keystore: KeyStore;
  clients: ClientCache;
  listener: PgListener;
  registry: Registry;
  isShuttingDown: () => boolean;
  webSessions: WebSessionService | undefined;
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

/** Each feature module: its service (with its repo) and its routes. */
function registerModules(app: FastifyInstance, deps: AppDeps, shared: Shared): void {
  const { prisma } = deps;
  const { keystore, clients, listener, isShuttingDown, registry, webSessions } = shared;
  const staleAfterMs = deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const readinessTimeoutMs = deps.readinessTimeoutMs ?? 1000;
  registerHealth(app, {
    service: createHealthService({ prisma, repo: healthRepo, readinessTimeoutMs, isShuttingDown }),
  });
  const sites = createSiteService({
    prisma,
    repo: siteRepo,
    silenceAfterMs: deps.siteSilenceAfterMs ?? DEFAULT_SITE_SILENCE_AFTER_MS,
  });
  registerSites(app, { service: sites });
  registerSiteMetrics(registry, sites);
  registerTopology(app, { service: createTopologyService({ prisma, repo: topologyRepo }) });
  registerDeviceRoles(app, { service: createDeviceRoleService({ prisma, repo: deviceRoleRepo }) });
  const devices = createDeviceService({ prisma, repo: deviceRepo, pool: deps.pool, staleAfterMs });
  registerDevices(app, { service: devices });
  registerReflections(app, {
    service: createReflectionService({
      prisma,
      repo: reflectionRepo,
      devices,
      settings: netboxSettingsRepo,
      impairment: deps.impairment ?? DEFAULT_IMPAIRMENT_POLICY,
    }),
  });
  const netboxSettings = createNetboxSettingsService({ prisma, repo: netboxSettingsRepo });
  registerNetboxSettings(app, { service: netboxSettings });
  app.addHook("onReady", async () => {
    const configuration = { id: "hub-configuration", kind: "local" as const, scopes: new Set<string>() };
    const applied = await netboxSettings.applyConfigured(
      { principal: configuration, requestId: "hub-start" },
      deps.netboxSettings ?? EMPTY_NETBOX_SETTINGS,
    );
    if (applied) app.log.info("NetBox settings applied from the hub's configuration");
  });
  const discrepancies = createDiscrepancyService({ prisma, repo: discrepancyRepo, staleAfterMs });
  registerDiscrepancies(app, { service: discrepancies });
  registerDiscrepancyMetrics(registry, discrepancies);
  registerJobs(app, { service: createJobService({ prisma, repo: jobRepo, devices, imagePolicy: deps.imagePolicy }) });
  registerSlurmBootstrap(app, { service: createSlurmBootstrapService({ prisma, repo: slurmBootstrapRepo }) });
  registerAudit(app, { service: createAuditService({ prisma, repo: auditRepo }) });
  const identity = createIdentityService({
    prisma,
    repo: identityRepo,
    config: deps.identity.config,
    keystore,
    rateLimitPerMinute: deps.identity.tokenRateLimitPerMinute ?? 60,
    registry: shared.registry,
  });
  registerOAuth(app, { service: identity });
  registerSigningKeyRotation(app, { service: identity });
  registerWhoAmI(app);
  const satellites = createSatelliteService({
    prisma,
    repo: satelliteRepo,
    rotationOverlapMs: deps.identity.rotationOverlapMs ?? 3600_000,
    clientsChanged: () => clients.invalidate(),
  });
  registerSatellites(app, { service: satellites });
  registerClients(app, {
    service: createClientService({
      prisma,
      repo: clientRepo,
      rotationOverlapMs: deps.identity.rotationOverlapMs ?? 3600_000,
      clientsChanged: (clientId) => clients.invalidate(clientId),
    }),
  });
  app.decorate("identity", { config: deps.identity.config, keystore, clients, satellites });
  if (webSessions) registerWebSession(app, { service: webSessions });
  if (deps.webUi)
    registerWebUi(app, {
      service: createWebUiService({ ...deps.webUi, issuer: deps.identity.config.external?.issuer }),
    });

  const notifier = new FeedNotifier(listener);
  const sequencer = new FeedSequencer({ prisma, repo: feedRepo, log: app.log });
  notifier.onNotify = () => sequencer.run();
  app.addHook("preClose", async () => notifier.close());
  const snapshots = createSnapshotService({
    prisma,
    pool: deps.pool,
    repo: feedRepo,
    staleAfterMs,
    siteSilenceAfterMs: deps.siteSilenceAfterMs ?? DEFAULT_SITE_SILENCE_AFTER_MS,
    timeoutMs: deps.snapshotTimeoutMs ?? 600_000,
    // A quarter of the pool at most, so snapshots (two connections each at their start) can
    // never take the connections the rest of the API needs.
    maxConcurrent: deps.snapshotMaxConcurrent ?? Math.max(1, Math.floor((deps.pool?.options.max ?? 10) / 4)),
    stallMs: deps.snapshotStallMs ?? 60_000,
  });
  registerFeed(app, {
    service: createFeedService({ prisma, pool: deps.pool, repo: feedRepo, sequencer, notifier }),
    snapshots,
  });
  registerFeedMetrics(registry, prisma, feedRepo);
  const retention = new FeedRetention({
    prisma,
    repo: feedRepo,
    retentionMs: deps.feedRetention?.retentionMs ?? DEFAULT_FEED_RETENTION_S * 1000,
    intervalMs: deps.feedRetention?.intervalMs ?? 60_000,
    log: app.log,
    registry,
    ...(deps.feedRetention?.now ? { now: deps.feedRetention.now } : {}),
  });
  app.decorate("feedRetention", retention);
  app.addHook("onReady", async () => retention.start());
  app.addHook("preClose", () => retention.stop());
}
