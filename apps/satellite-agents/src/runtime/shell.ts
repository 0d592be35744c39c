/**
 * The process shell every satellite agent runs in, the Temporal worker too: configuration,
 * logger, OAuth2 token, hub client, the /healthz /readyz /metrics port, heartbeats, signals and
 * the exit code. What runs inside is the definition's `start`: loops of reflectors and
 * controllers (./agent.ts), or Temporal's Worker.run().
 *
 *  - A configuration error exits 2 at once, naming the variables (never their values).
 *  - A setup step that fails (hub or Temporal unreachable at start) is retried with backoff
 *    (`ctx.retry`), then exits 1; one retrying cannot fix (site unknown) exits 1 at once.
 *  - Work that fails for good (a loop that spent its failure budget, the Temporal worker
 *    failing): exit 1, so Kubernetes restarts the pod and the restart-loop alerts see it
 *    (runbook: FleetManagerOpenStackStateStale, FleetManagerWorkflowAgentStale).
 *  - SIGTERM/SIGINT: stop starting work, let what runs finish (up to FM_SHUTDOWN_TIMEOUT_MS),
 *    send a last heartbeat, close the port, exit 0.
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { HubClient } from "@fm/clients";
import { agentScope, type AgentKind } from "@fm/domain";
import { ConfigError, loadConfig, satelliteName, type CommonConfig } from "./config.ts";
import { listen } from "./health.ts";
import { heartbeats, sendHeartbeat, type Heartbeat } from "./heartbeat.ts";
import { agentLogger, describeError } from "./log.ts";
import { LoopGaveUp, type Loop } from "./loop.ts";
import { createAgentMetrics, type AgentMetrics } from "./metrics.ts";
import { withRetries } from "./setup-retry.ts";
import { TokenSource } from "./token.ts";

/** What the shell gives the process it runs. */
export interface ShellContext<C> {
  config: CommonConfig & C;
  satellite: string;
  log: Logger;
  /** The hub, as this agent's OAuth2 client. */
  hub: HubClient;
  metrics: AgentMetrics;
  now: () => number;
  /** Aborts on SIGTERM/SIGINT. */
  signal: AbortSignal;
  /** Runs a setup step with the loops' backoff and failure budget; undefined when stopped meanwhile. */
  retry<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
}

/** A process at work. */
export interface Running {
  /** The loops whose ages /healthz, /readyz, /metrics and the heartbeats report (the worker has none). */
  loops: readonly Loop[];
  /** Resolves once the work stopped after the signal; rejects when it failed for good (exit 1). */
  done: Promise<void>;
}

export type Config<E extends z.ZodRawShape> = CommonConfig & z.infer<z.ZodObject<E>>;

export interface ProcessDefinition<E extends z.ZodRawShape> {
  kind: AgentKind;
  /** How messages name the process, e.g. `openstack agent`. */
  title: string;
  /** The process's own environment variables, besides the common ones (./config.ts). */
  env: E;
  /** Defaults of common variables that differ for this process (e.g. a shorter interval). */
  envDefaults?: Partial<Record<keyof CommonConfig, string>>;
  /** Rules across variables that a schema of single ones cannot state; throws ConfigError. */
  checkConfig?(config: Config<E>): void;
  /** Attempts per hub request. Default 2, 250 ms apart: loops own the longer backoff, so a hub outage shows as failed cycles. */
  hubAttempts?: { maxAttempts: number; backoffMs?: number };
  /** How much longer than FM_SHUTDOWN_TIMEOUT_MS stopping may take before the process exits 1. */
  shutdownSlackMs?: number;
  /** Sets up and starts the work; undefined when stopped during setup. A ConfigError exits 2. */
  start(ctx: ShellContext<z.infer<z.ZodObject<E>>>): Promise<Running | undefined>;
}

/** Runs the process until it stops; resolves with its exit code. */
export async function runProcess<E extends z.ZodRawShape>(
  def: ProcessDefinition<E>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const loaded = configure(def, env);
  if (!loaded) return 2;
  const { config, satellite } = loaded;
  const log = agentLogger(def.kind, config, satellite);
  const metrics = createAgentMetrics({ agent: def.kind, site: config.FM_SITE, satellite });
  const hub = hubClient(def, config);
  const stop = new AbortController();
  let running: Running | undefined;
  // Signals first: a SIGTERM that arrives once the port is announced must stop the process cleanly.
  const offSignals = onShutdownSignals(stop, log, config.FM_SHUTDOWN_TIMEOUT_MS + (def.shutdownSlackMs ?? 0));
  const server = await listen(
    config,
    metrics,
    () => ({ started: running !== undefined, loops: running?.loops ?? [] }),
    log,
  ).catch((err: unknown) => {
    offSignals();
    throw err;
  });
  const ctx: ShellContext<z.infer<z.ZodObject<E>>> = {
    config,
    satellite,
    log,
    hub,
    metrics,
    now: Date.now,
    signal: stop.signal,
    retry: (what, fn) => withRetries(config, log, stop.signal, what, fn),
  };
  let code = 0;
  let beating: Promise<void> | undefined;
  let heartbeat: Heartbeat | undefined;
  try {
    running = await def.start(ctx);
    if (running) {
      heartbeat = { hub, kind: def.kind, satellite, loops: running.loops, log };
      beating = heartbeats(heartbeat, config.FM_HEARTBEAT_INTERVAL_S * 1000, stop.signal);
      await running.done.catch((err: unknown) => {
        if (!(err instanceof LoopGaveUp)) log.fatal({ err: describeError(err) }, `${def.title} failed`);
        code = 1;
      });
    }
  } catch (err) {
    code = setupFailed(def, err, log);
  } finally {
    stop.abort();
    await beating;
    if (heartbeat?.loops.length && code === 0) await sendHeartbeat(heartbeat).catch(() => {});
    await new Promise<void>((r) => server.close(() => r()));
    offSignals();
  }
  const outcome = ["agent stopped", "agent exiting after repeated failures", "agent exiting: invalid configuration"];
  log.info({ exitCode: code }, outcome[code]);
  return code;
}

function configure<E extends z.ZodRawShape>(
  def: ProcessDefinition<E>,
  env: NodeJS.ProcessEnv,
): { config: Config<E>; satellite: string } | undefined {
  try {
    const config = loadConfig(def.env, { ...def.envDefaults, ...env });
    def.checkConfig?.(config);
    return { config, satellite: satelliteName(def.kind, config) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${def.title}: ${err.message}\n`);
    return undefined;
  }
}

function hubClient<E extends z.ZodRawShape>(def: ProcessDefinition<E>, config: CommonConfig): HubClient {
  const tokens = new TokenSource({
    issuer: config.FM_TOKEN_ISSUER ?? config.FM_HUB_URL,
    clientId: config.FM_CLIENT_ID,
    clientSecret: config.FM_CLIENT_SECRET,
    scope: `fleet.read ${agentScope(def.kind)}`,
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });
  return new HubClient({
    baseUrl: config.FM_HUB_URL,
    token: () => tokens.get(),
    onUnauthorized: () => tokens.invalidate(),
    ...(def.hubAttempts ?? { maxAttempts: 2, backoffMs: 250 }),
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });
}

/** Exit code of a failed setup: 2 for configuration found wrong only now, else 1. */
function setupFailed<E extends z.ZodRawShape>(def: ProcessDefinition<E>, err: unknown, log: Logger): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`${def.title}: ${err.message}\n`);
    log.fatal({ err: describeError(err) }, "invalid configuration");
    return 2;
  }
  log.fatal({ err: describeError(err) }, "agent setup failed");
  return 1;
}

/**
 * SIGTERM/SIGINT abort `stop`. Work stuck past the grace period (a source that never answers)
 * must not keep the pod in Terminating until Kubernetes kills it without a word: exit 1.
 */
function onShutdownSignals(stop: AbortController, log: Logger, graceMs: number): () => void {
  let deadline: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    log.info({ signal }, "shutting down");
    stop.abort();
    deadline = setTimeout(() => {
      log.error({ timeoutMs: graceMs }, "shutdown timed out; exiting");
      process.exit(1);
    }, graceMs).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return () => {
    clearTimeout(deadline);
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
}
