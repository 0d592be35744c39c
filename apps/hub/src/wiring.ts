/**
 * The hub's dependency graph in one place: every feature module's service, built from its repo
 * and the services and settings it needs, by name, and its routes and metrics registered.
 * app.ts sets up Fastify and the plugins, then calls registerModules.
 */
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import {
  DEFAULT_FEED_RETENTION_S,
  DEFAULT_IMPAIRMENT_POLICY,
  DEFAULT_SITE_SILENCE_AFTER_MS,
  DEFAULT_STALE_AFTER_MS,
  EMPTY_NETBOX_SETTINGS,
} from "@fm/domain";
import type { AppDeps } from "./app-deps.ts";
import type { PgListener } from "./lib/pg-listener.ts";
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
import type { ClientCache } from "./modules/identity/client-cache.ts";
import type { KeyStore } from "./modules/identity/keystore.ts";
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
import { createSatelliteService } from "./modules/satellites/service.ts";
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
import { createWebUiService } from "./modules/web-ui/service.ts";
import { registerWebSession } from "./modules/web-session/routes.ts";
import type { WebSessionService } from "./modules/web-session/service.ts";

/** What the plugins set up and the modules share. */
export interface Shared {
  keystore: KeyStore;
  clients: ClientCache;
  listener: PgListener;
  registry: Registry;
  isShuttingDown: () => boolean;
  webSessions: WebSessionService | undefined;
}

/** Each feature module: its service (with its repo) and its routes. */
export function registerModules(app: FastifyInstance, deps: AppDeps, shared: Shared): void {
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
