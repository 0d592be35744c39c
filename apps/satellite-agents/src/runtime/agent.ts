/**
 * The process around an agent's reflectors: config, logger, OAuth2 token, hub client, the
 * /healthz and /metrics port, heartbeats, signals and the exit code.
 *
 *  - SIGTERM/SIGINT: stop starting cycles, let a running cycle finish (up to
 *    FM_SHUTDOWN_TIMEOUT_MS), send a last heartbeat, close the port, exit 0.
 *  - A reflector that spends its failure budget: exit 1, so Kubernetes restarts the pod and
 *    the restart-loop alert can see it (runbook: FleetManagerOpenStackStateStale).
 *  - A setup failure (hub unreachable at start, site unknown): retried with backoff, then
 *    exit 1 the same way; a configuration error exits 2 at once, naming the variables.
 */
import { createServer, type Server } from "node:http";
import { pino, type Logger } from "pino";
import type { z } from "zod";
import { HubClient, HubApiError } from "@fm/clients";
import { agentScope, type AgentKind, type Site } from "@fm/domain";
import { ConfigError, loadConfig, satelliteName, type CommonConfig } from "./config.ts";
import { createAgentMetrics, type AgentMetrics } from "./metrics.ts";
import { Reflector, ReflectorGaveUp, describe, type ReflectorSpec } from "./reflector.ts";
import { TokenSource } from "./token.ts";
import { backoffDelay, sleep } from "./backoff.ts";

export interface AgentContext<C> {
  config: CommonConfig & C;
  log: Logger;
  hub: HubClient;
  site: Site;
  satellite: string;
  metrics: AgentMetrics;
  signal: AbortSignal;
}

export interface AgentDefinition<E extends z.ZodRawShape> {
  kind: AgentKind;
  /** The agent's own environment variables. */
  env: E;
  /** Defaults of common variables that differ for this agent (e.g. a shorter interval). */
  envDefaults?: Partial<Record<keyof CommonConfig, string>>;
  /** Builds the reflectors (may ask the hub what to run). Called once, after the site is known. */
  setup(ctx: AgentContext<z.infer<z.ZodObject<E>>>): Promise<ReflectorSpec<unknown>[]>;
}

export async function runAgent<E extends z.ZodRawShape>(def: AgentDefinition<E>): Promise<number> {
  let config: CommonConfig & z.infer<z.ZodObject<E>>;
  let satellite: string;
  try {
    config = loadConfig(def.env, { ...def.envDefaults, ...process.env });
    satellite = satelliteName(def.kind, config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${def.kind} agent: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = agentLogger(def.kind, config, satellite);
  const metrics = createAgentMetrics({ agent: def.kind, site: config.FM_SITE, satellite });
  const tokens = new TokenSource({
    issuer: config.FM_TOKEN_ISSUER ?? config.FM_HUB_URL,
    clientId: config.FM_CLIENT_ID,
    clientSecret: config.FM_CLIENT_SECRET,
    scope: `fleet.read ${agentScope(def.kind)}`,
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });
  // Two attempts per request: the reflector loop owns the longer backoff, so a hub outage is
  // counted as failed cycles (visible in metrics) rather than hidden inside one request.
  const hub = new HubClient({
    baseUrl: config.FM_HUB_URL,
    token: () => tokens.get(),
    onUnauthorized: () => tokens.invalidate(),
    maxAttempts: 2,
    backoffMs: 250,
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });

  const stop = new AbortController();
  const reflectors: Reflector<unknown>[] = [];
  let ready = false;
  const server = await listen(config, metrics, () => ({ ready, reflectors }), log);
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    log.info({ signal: sig }, "shutting down");
    stop.abort();
    // A cycle stuck past the grace period (a source that never answers) must not keep the
    // pod in Terminating until Kubernetes kills it without a word.
    setTimeout(() => {
      log.error({ timeoutMs: config.FM_SHUTDOWN_TIMEOUT_MS }, "shutdown timed out; exiting");
      process.exit(1);
    }, config.FM_SHUTDOWN_TIMEOUT_MS).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  let code = 0;
  let heartbeat: Promise<void> | undefined;
  try {
    const site = await withRetries(config, log, stop.signal, "resolve site", async () => {
      const s = await hub.findSite(config.FM_SITE);
      if (!s) throw new FatalSetupError(`site '${config.FM_SITE}' does not exist in the hub`);
      return s;
    });
    if (!site) return 0; // stopped while waiting
    const ctx: AgentContext<z.infer<z.ZodObject<E>>> = {
      config,
      log,
      hub,
      site,
      satellite,
      metrics,
      signal: stop.signal,
    };
    const specs = await withRetries(config, log, stop.signal, "setup", () => def.setup(ctx));
    if (!specs) return 0;
    const opts = {
      intervalMs: config.FM_REFLECT_INTERVAL_S * 1000,
      backoffBaseMs: config.FM_BACKOFF_BASE_MS,
      backoffMaxMs: config.FM_BACKOFF_MAX_S * 1000,
      maxConsecutiveFailures: config.FM_MAX_CONSECUTIVE_FAILURES,
    };
    reflectors.push(...specs.map((s) => new Reflector(s, opts, metrics, log)));
    ready = true;
    if (!reflectors.length) log.warn("no reflector to run at this site; serving /healthz and heartbeats only");
    heartbeat = heartbeats(hub, def.kind, satellite, reflectors, config, log, stop.signal);
    // The first reflector to give up stops the others: the process restarts as a whole.
    await Promise.all(
      reflectors.map((r) =>
        r.run(stop.signal).catch((err: unknown) => {
          if (!(err instanceof ReflectorGaveUp)) log.error({ err: describe(err) }, "reflector crashed");
          code = 1;
          stop.abort();
        }),
      ),
    );
  } catch (err) {
    code = 1;
    log.fatal({ err: describe(err) }, "agent setup failed");
  } finally {
    stop.abort();
    await heartbeat;
    if (reflectors.length && code === 0) await sendHeartbeat(hub, def.kind, satellite, reflectors, log).catch(() => {});
    await new Promise<void>((r) => server.close(() => r()));
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  log.info({ exitCode: code }, code ? "agent exiting after repeated failures" : "agent stopped");
  return code;
}

/**
 * The agents' logger. Synchronous writes: an agent exits with process.exit right after its
 * last line ("agent exiting after repeated failures"), the one `kubectl logs --previous` must
 * show; pino's default asynchronous stream could lose it. Agents log a few lines per cycle.
 */
export function agentLogger(kind: AgentKind, config: CommonConfig, satellite: string): Logger {
  return pino(
    { level: config.LOG_LEVEL, base: { agent: kind, site: config.FM_SITE, satellite } },
    pino.destination({ dest: 1, sync: true }),
  );
}

/** A setup failure that retrying cannot fix (unknown site, missing credentials file). */
export class FatalSetupError extends Error {}

/** Setup steps retry with the same backoff and budget as reflector cycles. */
export async function withRetries<T>(
  config: CommonConfig,
  log: Logger,
  signal: AbortSignal,
  what: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  for (let failures = 0; ;) {
    if (signal.aborted) return undefined;
    try {
      return await fn();
    } catch (err) {
      failures++;
      const permanent =
        err instanceof FatalSetupError ||
        (err instanceof HubApiError &&
          err.status >= 400 &&
          err.status < 500 &&
          err.status !== 401 &&
          err.status !== 429);
      if (permanent || failures >= config.FM_MAX_CONSECUTIVE_FAILURES) throw err;
      const delay = backoffDelay(failures, config.FM_BACKOFF_BASE_MS, config.FM_BACKOFF_MAX_S * 1000);
      log.warn({ err: describe(err), failures, retryInMs: delay }, `${what} failed; retrying`);
      await sleep(delay, signal);
    }
  }
}

export async function heartbeats(
  hub: HubClient,
  kind: AgentKind,
  satellite: string,
  reflectors: Reflector<unknown>[],
  config: CommonConfig,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    await sendHeartbeat(hub, kind, satellite, reflectors, log).catch((err: unknown) =>
      log.warn({ err: describe(err) }, "heartbeat failed"),
    );
    await sleep(config.FM_HEARTBEAT_INTERVAL_S * 1000, signal);
  }
}

export function sendHeartbeat(
  hub: HubClient,
  kind: AgentKind,
  satellite: string,
  reflectors: Reflector<unknown>[],
  log: Logger,
): Promise<void> {
  const ages = Object.fromEntries(reflectors.map((r) => [r.store, Math.round(r.ageSeconds() * 10) / 10]));
  log.debug({ reflectors: ages }, "heartbeat");
  return hub.heartbeat(satellite, kind, { reflectors: ages });
}

export function listen(
  config: CommonConfig,
  metrics: AgentMetrics,
  state: () => { ready: boolean; reflectors: Reflector<unknown>[] },
  log: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const { ready, reflectors } = state();
    if (path === "/healthz") {
      // Liveness: the process serves. Reflector health is in /metrics and /readyz: a failing
      // source must not make Kubernetes kill an agent that is correctly backing off.
      const body = Object.fromEntries(
        reflectors.map((r) => [
          r.store,
          { ageSeconds: r.ageSeconds(), consecutiveFailures: r.consecutiveFailures, cycles: r.cycles },
        ]),
      );
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ status: "ok", ready, reflectors: body }));
    } else if (path === "/readyz") {
      const ok = ready && reflectors.every((r) => r.lastSuccessAt !== undefined);
      res
        .writeHead(ok ? 200 : 503, { "content-type": "application/json" })
        .end(JSON.stringify({ status: ok ? "ready" : "not ready" }));
    } else if (path === "/metrics") {
      for (const r of reflectors) metrics.age.set({ store: r.store }, r.ageSeconds());
      metrics.registry
        .metrics()
        .then((text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text))
        .catch(() => res.writeHead(500).end());
    } else {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ status: 404, title: "Not Found" }));
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.METRICS_PORT, config.METRICS_HOST, () => {
      const addr = server.address();
      log.info(
        { metricsPort: typeof addr === "object" && addr ? addr.port : config.METRICS_PORT },
        "agent listening for /healthz and /metrics",
      );
      resolve(server);
    });
  });
}
