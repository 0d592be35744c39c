/**
 * Hub entry point: parse the environment, find or start the database, migrate, serve, and
 * shut down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close
 * the pool, stop the embedded database) within FM_SHUTDOWN_TIMEOUT_MS.
 */
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { EnvError, parseEnv, type Env } from "./env.ts";
import { buildApp } from "./app.ts";
import { hubLogger } from "./lib/log.ts";
import { createDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./db/embedded.ts";
import { loadKeyEncryptionKey } from "./modules/identity/kek.ts";
import { ensureAdminClient, reconcileExpectedSatellites } from "./modules/identity/bootstrap.ts";
import { localAuthenticator } from "./plugins/request-context.ts";

/**
 * Prisma's query compiler is WebAssembly, compiled when the first query runs. By default V8
 * recompiles its hot functions with its optimising compiler on background threads, whose
 * working memory (~50 MiB at the hub's start) glibc keeps in those threads' arenas after it is
 * freed: a third of the idle hub's RSS. Prisma caches each query shape's plan, so the compiler
 * runs once per shape and its baseline code is fast enough; an unreachable tier-up budget keeps
 * it there. Set here, before the first query, so every way of running the hub gets it.
 * README, Benchmarks (`built`), has the RSS and throughput with and without.
 */
setFlagsFromString("--wasm-tiering-budget=2000000000");

let env: Env;
try {
  env = parseEnv();
} catch (err) {
  if (err instanceof EnvError) {
    process.stderr.write(`fleet-manager hub: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}

const logger = hubLogger(env.LOG_LEVEL);

let embedded: EmbeddedPostgres | undefined;
let shuttingDown = false;

async function start() {
  const t0 = performance.now();
  if (!env.DATABASE_URL) embedded = await startEmbeddedPostgres(env.FM_DATA_DIR, logger);
  const databaseUrl = env.DATABASE_URL ?? embedded!.url;
  if (env.FM_MIGRATE_ON_START) await migrate(databaseUrl, logger);

  const db = createDatabase(databaseUrl, {
    poolMax: env.FM_DB_POOL_MAX,
    connectTimeoutMs: env.FM_READINESS_TIMEOUT_MS,
  });
  const identityConfig = {
    issuer: env.FM_ISSUER_URL?.replace(/\/+$/, "") ?? "",
    audience: env.FM_TOKEN_AUDIENCE,
    tokenLifetimeS: env.FM_TOKEN_LIFETIME_S,
    external: env.FM_OIDC_ISSUER
      ? {
          issuer: env.FM_OIDC_ISSUER.replace(/\/+$/, ""),
          audience: env.FM_OIDC_AUDIENCE,
          mapping: env.FM_OIDC_SCOPE_MAPPING,
        }
      : undefined,
  };
  if (env.FM_AUTH === "none")
    logger.warn("FM_AUTH=none: authentication is OFF and every caller is an administrator (local development only)");
  const app = await buildApp({
    identity: {
      config: identityConfig,
      kek: await loadKeyEncryptionKey(env.FM_KEY_ENCRYPTION_KEY, env.FM_DATA_DIR),
      rotationOverlapMs: env.FM_SECRET_ROTATION_OVERLAP_S * 1000,
      tokenRateLimitPerMinute: env.FM_TOKEN_RATE_LIMIT_PER_MIN,
    },
    ...(env.FM_AUTH === "none" ? { authenticate: localAuthenticator } : {}),
    prisma: db.prisma,
    pool: db.pool,
    logger,
    staleAfterMs: env.FM_STALE_AFTER_S * 1000,
    netboxSettings: {
      deviceFilters: env.FM_NETBOX_DEVICE_FILTERS,
      deviceRoleClassMapping: env.FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING,
    },
    siteSilenceAfterMs: env.FM_SITE_SILENCE_AFTER_S * 1000,
    feedRetention: { retentionMs: env.FM_FEED_RETENTION_S * 1000 },
    snapshotTimeoutMs: env.FM_FEED_SNAPSHOT_TIMEOUT_S * 1000,
    impairment: {
      cordonAfterMs: env.FM_IMPAIRMENT_CORDON_AFTER_S * 1000,
      releaseAfterMs: env.FM_IMPAIRMENT_RELEASE_AFTER_S * 1000,
      maxSiteFraction: env.FM_IMPAIRMENT_MAX_SITE_FRACTION,
    },
    imagePolicy: { allowHttp: env.FM_IMAGE_ALLOW_HTTP, hosts: env.FM_IMAGE_HOSTS },
    bodyLimitBytes: env.FM_BODY_LIMIT_BYTES,
    slowClients: {
      requestTimeoutMs: env.FM_REQUEST_TIMEOUT_S * 1000,
      slowBodyTimeoutMs: env.FM_REFLECTION_REQUEST_TIMEOUT_S * 1000,
      maxConnections: env.FM_MAX_CONNECTIONS,
      maxConnectionsPerAddress: env.FM_MAX_CONNECTIONS_PER_ADDRESS,
      trustedProxies: env.FM_TRUST_PROXY,
    },
    readinessTimeoutMs: env.FM_READINESS_TIMEOUT_MS,
    docsEnabled: env.FM_DOCS_ENABLED,
    // main.ts (source) and main.js (built) both sit two folders below apps/: apps/web/dist either way.
    webUi: {
      dir: env.FM_WEB_DIR ?? fileURLToPath(new URL("../../web/dist", import.meta.url)),
      clientId: env.FM_WEB_CLIENT_ID,
      sessionIdleS: env.FM_WEB_SESSION_IDLE_S,
      sessionMaxS: env.FM_WEB_SESSION_MAX_S,
    },
    isShuttingDown: () => shuttingDown,
  });
  app.addHook("onClose", async () => db.close());
  await app.ready();
  await ensureAdminClient(db.prisma, { secret: env.FM_BOOTSTRAP_ADMIN_SECRET, dataDir: env.FM_DATA_DIR, log: logger });
  if (env.FM_EXPECTED_SATELLITES)
    await reconcileExpectedSatellites(db.prisma, app.identity.satellites, env.FM_EXPECTED_SATELLITES, logger);
  const address = await app.listen({ port: env.PORT, host: env.HOST });
  // Without FM_ISSUER_URL the issuer is the address the hub listens on.
  if (!identityConfig.issuer) identityConfig.issuer = address.replace("0.0.0.0", "127.0.0.1");
  logger.info(
    {
      address,
      issuer: identityConfig.issuer,
      embeddedDatabase: Boolean(embedded),
      startupMs: Math.round(performance.now() - t0),
    },
    "hub ready",
  );

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    const force = setTimeout(() => {
      logger.error({ timeoutMs: env.FM_SHUTDOWN_TIMEOUT_MS }, "graceful shutdown timed out; exiting");
      process.exit(1);
    }, env.FM_SHUTDOWN_TIMEOUT_MS - 250);
    force.unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests, then closes the pool
      await embedded?.stop();
      logger.info("stopped");
      process.exit(0);
    } catch (err) {
      logger.error({ err }, "error during shutdown");
      process.exit(1);
    }
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

start().catch(async (err: unknown) => {
  logger.fatal({ err }, "hub failed to start");
  await embedded?.stop().catch(() => {});
  process.exit(1);
});
