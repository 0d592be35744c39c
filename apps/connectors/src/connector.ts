/**
 * One connector instance as a process: configuration, logger, the hub as its own OAuth2 client
 * (scope fleet.read), its database (migrated at start, one process per name), the feed reader
 * and the deliverer, the /healthz /readyz /metrics port, signals and the exit code:
 *
 *  - invalid configuration: exit 2 at once, naming the variables, never their values;
 *  - the hub or the database unreachable at start: retried with backoff (the reader and the
 *    deliverer ride out outages afterwards: nothing is lost while they wait);
 *  - a configured site the hub does not know, or another process moving this instance's
 *    cursor: exit 1;
 *  - SIGTERM/SIGINT: the delivery in flight is abandoned or finished, then exit 0. A feed read
 *    or a commit cut short is harmless: the transaction rolls back and the page is read again.
 */
import pg from "pg";
import type { Logger } from "pino";
import { HubClient, TokenSource, backoffDelay, sleepUnlessAborted } from "@fm/clients";
import { ConfigError, loadConfig, readSecret, type ConnectorConfig } from "./env.ts";
import { Deliverer } from "./deliverer.ts";
import { listen } from "./health.ts";
import { connectorLogger, describeError } from "./log.ts";
import { createConnectorMetrics } from "./metrics.ts";
import { migrate } from "./queue/migrate.ts";
import { QueueStore, holdInstanceLock } from "./queue/store.ts";
import { FeedReader } from "./reader.ts";
import { EntraTokenSource } from "./sink/entra-token.ts";
import { KustoSink } from "./sink/kusto.ts";
import type { Sink } from "./sink/sink.ts";
import { secretKey } from "./sink/standard-webhooks.ts";
import { WebhookSink } from "./sink/webhook.ts";

export async function runConnector(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: ConnectorConfig;
  let hubSecret: string;
  try {
    config = loadConfig(env);
    hubSecret = readSecret("FM_CLIENT_SECRET_FILE", config.FM_CLIENT_SECRET_FILE);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`connector: ${err.message}\n`);
    return 2;
  }
  const log = connectorLogger(config.CONNECTOR_NAME, config.LOG_LEVEL);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    log.info({ signal }, "shutting down");
    stop.abort();
    setTimeout(() => {
      log.error({ timeoutMs: config.CONNECTOR_SHUTDOWN_TIMEOUT_MS }, "shutdown timed out; exiting");
      process.exit(1);
    }, config.CONNECTOR_SHUTDOWN_TIMEOUT_MS).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  const pool = new pg.Pool({ connectionString: config.CONNECTOR_DATABASE_URL, max: 4 });
  pool.on("error", (err) => log.warn({ err: describeError(err) }, "idle database connection lost"));
  const store = new QueueStore(pool, config.CONNECTOR_NAME);
  let reader: FeedReader | undefined;
  let deliverer: Deliverer | undefined;
  const metrics = createConnectorMetrics(config.CONNECTOR_NAME, {
    stats: () => store.stats(),
    lag: () => reader?.lag() ?? { events: 0, seconds: 0 },
  });
  const server = await listen(
    config.METRICS_PORT,
    config.METRICS_HOST,
    metrics.registry,
    async () => {
      const ready = (reader?.pages ?? 0) > 0;
      const stats = ready ? await store.stats() : undefined;
      return {
        ready,
        body: { ...stats, feedLag: reader?.lag(), deliveryFailuresInARow: deliverer?.consecutiveFailures ?? 0 },
      };
    },
    log,
  );
  let code = 0;
  let lock: pg.PoolClient | undefined;
  try {
    const retry = <T>(what: string, fn: () => Promise<T>) => withRetries(config, log, stop.signal, what, fn);
    if ((await retry("database migrations", () => migrateWith(pool, log))) === undefined) return 0;
    lock = await holdInstanceLock(pool, config.CONNECTOR_NAME, stop.signal, () =>
      log.warn("another process runs this connector: waiting for it to stop"),
    );
    if (!lock) return 0;
    const tokens = new TokenSource({
      issuer: config.FM_TOKEN_ISSUER ?? config.FM_HUB_URL,
      clientId: config.FM_CLIENT_ID,
      clientSecret: hubSecret,
      scope: "fleet.read",
      timeoutMs: config.CONNECTOR_HTTP_TIMEOUT_MS,
    });
    const hub = new HubClient({
      baseUrl: config.FM_HUB_URL,
      token: () => tokens.get(),
      onUnauthorized: () => tokens.invalidate(),
      maxAttempts: 2,
      backoffMs: 250,
      timeoutMs: config.CONNECTOR_HTTP_TIMEOUT_MS,
    });
    const siteIds = await retry("site lookup", () => resolveSites(hub, config.CONNECTOR_SITES));
    if (!siteIds) return 0;
    const backoff = {
      backoffBaseMs: config.CONNECTOR_BACKOFF_BASE_MS,
      backoffMaxMs: config.CONNECTOR_BACKOFF_MAX_S * 1000,
    };
    deliverer = new Deliverer({
      store,
      sink: makeSink(config),
      batchSize: config.CONNECTOR_BATCH_SIZE,
      metrics,
      log,
      ...backoff,
    });
    const d = deliverer;
    reader = new FeedReader({
      hub,
      store,
      transform: { connector: config.CONNECTOR_NAME, siteIds: new Set(siteIds) },
      sites: config.CONNECTOR_SITES,
      pageSize: config.CONNECTOR_FEED_PAGE_SIZE,
      waitS: config.CONNECTOR_FEED_WAIT_S,
      // A long-poll, the client's two attempts and their timeouts: anything longer is a stall.
      stallAfterMs: config.CONNECTOR_FEED_WAIT_S * 1000 + 2 * config.CONNECTOR_HTTP_TIMEOUT_MS,
      metrics,
      log,
      onEnqueued: () => d.wake(),
      ...backoff,
    });
    log.info({ sites: config.CONNECTOR_SITES, sink: config.CONNECTOR_SINK }, "connector started");
    const reading = reader.run(stop.signal);
    const delivering = deliverer.run(stop.signal);
    // The reader fails for good only when another process moved the cursor: stop everything.
    reading.catch((err: unknown) => {
      log.fatal({ err: describeError(err) }, "feed reader stopped");
      code = 1;
      stop.abort();
    });
    await delivering;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`connector: ${err.message}\n`);
      log.fatal({ err: describeError(err) }, "invalid configuration");
      code = err.problems.some((p) => p.startsWith("CONNECTOR_SITES")) ? 1 : 2;
    } else {
      log.fatal({ err: describeError(err) }, "connector failed");
      code = 1;
    }
  } finally {
    stop.abort();
    lock?.release();
    await new Promise<void>((r) => server.close(() => r()));
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  log.info({ exitCode: code }, code === 0 ? "connector stopped" : "connector exiting");
  return code;
}

async function migrateWith(pool: pg.Pool, log: Logger): Promise<true> {
  const c = await pool.connect();
  try {
    const applied = await migrate(c);
    if (applied.length) log.info({ applied }, "applied connector database migrations");
    return true;
  } finally {
    c.release();
  }
}

/** Slugs to ids; a slug the hub does not know is configuration no retry can fix. */
async function resolveSites(hub: HubClient, slugs: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const slug of slugs) {
    const { items } = await hub.listSites({ slug, limit: 1 });
    const site = items.find((s) => s.slug === slug);
    if (!site) throw new ConfigError([`CONNECTOR_SITES: the hub has no site '${slug}'`]);
    ids.push(site.id);
  }
  return ids;
}

export function makeSink(c: ConnectorConfig): Sink {
  if (c.CONNECTOR_SINK === "webhook") {
    // Checked once at start (exit 2), as a secret no retry can fix; re-read per delivery after.
    try {
      secretKey(readSecret("WEBHOOK_SECRET_FILE", c.WEBHOOK_SECRET_FILE!));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError([`WEBHOOK_SECRET_FILE: ${(err as Error).message}`]);
    }
    return new WebhookSink({
      url: c.WEBHOOK_URL!,
      secret: () => readSecret("WEBHOOK_SECRET_FILE", c.WEBHOOK_SECRET_FILE!),
      timeoutMs: c.CONNECTOR_HTTP_TIMEOUT_MS,
    });
  }
  const tokens = new EntraTokenSource({
    authority: c.ENTRA_AUTHORITY,
    tenant: c.ENTRA_TENANT_ID!,
    clientId: c.ENTRA_CLIENT_ID!,
    secret: () => readSecret("ENTRA_CLIENT_SECRET_FILE", c.ENTRA_CLIENT_SECRET_FILE!),
    scope: c.KUSTO_TOKEN_SCOPE ?? `${c.KUSTO_CLUSTER_URL!}/.default`,
    timeoutMs: c.CONNECTOR_HTTP_TIMEOUT_MS,
  });
  return new KustoSink({
    clusterUrl: c.KUSTO_CLUSTER_URL!,
    database: c.KUSTO_DATABASE!,
    table: c.KUSTO_TABLE!,
    mappingName: c.KUSTO_MAPPING_NAME!,
    tokens,
    timeoutMs: c.CONNECTOR_HTTP_TIMEOUT_MS,
    app: `FleetManager.Connector.${c.CONNECTOR_NAME}`,
  });
}

/** A start-up step, retried with backoff until it succeeds; undefined when stopped meanwhile. ConfigError is not retried. */
async function withRetries<T>(
  c: ConnectorConfig,
  log: Logger,
  signal: AbortSignal,
  what: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  for (let failures = 1; !signal.aborted; failures++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const retryInMs = backoffDelay(failures, c.CONNECTOR_BACKOFF_BASE_MS, c.CONNECTOR_BACKOFF_MAX_S * 1000);
      log.error({ what, failures, retryInMs, err: describeError(err) }, "start-up step failed; retrying");
      await sleepUnlessAborted(retryInMs, signal);
    }
  }
  return undefined;
}
