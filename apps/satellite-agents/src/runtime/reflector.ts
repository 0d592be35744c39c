/**
 * One reflector: list a source's complete view, push it to the hub, at start and then every
 * interval — the informer pattern of Kubernetes controllers, with the hub's reflection endpoint
 * as the store. A failed cycle is retried after an exponential backoff with jitter; after
 * `maxConsecutiveFailures` failed cycles in a row the reflector gives up and the runtime exits
 * non-zero, so the orchestrator restarts the agent and the restart-loop alert
 * (FleetManagerOpenStackStateStale) sees it. Because every push is the source's whole view,
 * nothing is lost by a failed push: the next successful one carries every change since.
 */
import type { Logger } from "pino";
import { HubApiError } from "@fm/clients";
import type { AgentMetrics } from "./metrics.ts";
import { backoffDelay, sleep } from "./backoff.ts";

export interface ReflectorSpec<T> {
  /** Store name, the `store` label of the metrics, e.g. `ironic-nodes-overcloud`. */
  store: string;
  /** The source's complete current view. */
  list(signal: AbortSignal): Promise<T[]>;
  /**
   * Optional step between list and push (e.g. applying hub cordons to Ironic). It may change
   * the items to reflect what it did. A failure is counted and logged but does not stop the push.
   */
  reconcile?(items: T[], signal: AbortSignal): Promise<T[]>;
  /** Sends the view to the hub; returns what to log (the hub's counts). */
  push(items: T[], observedAt: Date, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Metric reason of a failed list, e.g. `unavailable` vs `http_error`. */
  classifyListError?(err: unknown): string;
}

export interface ReflectorOptions {
  intervalMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxConsecutiveFailures: number;
}

export class Reflector<T> {
  lastSuccessAt: number | undefined;
  consecutiveFailures = 0;
  cycles = 0;
  private running: Promise<void> | undefined;

  constructor(
    readonly spec: ReflectorSpec<T>,
    private readonly opts: ReflectorOptions,
    private readonly metrics: AgentMetrics,
    private readonly log: Logger,
    private readonly startedAt = Date.now(),
  ) {
    metrics.consecutiveFailures.set({ store: spec.store }, 0);
  }

  get store(): string {
    return this.spec.store;
  }

  /** Seconds since the last success (since start if none yet). */
  ageSeconds(now = Date.now()): number {
    return Math.max(0, (now - (this.lastSuccessAt ?? this.startedAt)) / 1000);
  }

  /**
   * Runs until `signal` aborts (resolves) or the failure budget is spent (rejects with
   * ReflectorGaveUp). A cycle in progress when the signal aborts is finished, not cut.
   */
  run(signal: AbortSignal): Promise<void> {
    this.running ??= this.loop(signal);
    return this.running;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    this.log.info({ store: this.store, intervalS: this.opts.intervalMs / 1000 }, "reflector started");
    while (!signal.aborted) {
      let delay = this.opts.intervalMs;
      try {
        await this.cycle(signal);
        this.consecutiveFailures = 0;
      } catch (err) {
        this.consecutiveFailures++;
        const { stage, reason } = err instanceof CycleError ? err : { stage: "cycle", reason: "internal" };
        const cause = err instanceof CycleError ? err.cause : err;
        this.metrics.errors.inc({ store: this.store, reason });
        delay = backoffDelay(this.consecutiveFailures, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
        this.log.error(
          {
            store: this.store,
            stage,
            reason,
            consecutiveFailures: this.consecutiveFailures,
            retryInMs: delay,
            err: describe(cause),
          },
          `reflector cycle failed (${this.consecutiveFailures}/${this.opts.maxConsecutiveFailures})`,
        );
        if (this.consecutiveFailures >= this.opts.maxConsecutiveFailures) {
          this.metrics.consecutiveFailures.set({ store: this.store }, this.consecutiveFailures);
          throw new ReflectorGaveUp(this.store, this.consecutiveFailures);
        }
      }
      this.metrics.consecutiveFailures.set({ store: this.store }, this.consecutiveFailures);
      await sleep(delay, signal);
    }
    this.log.info({ store: this.store }, "reflector stopped");
  }

  /** One list → reconcile → push. Public so tests and benchmarks can drive a single cycle. */
  async cycle(signal: AbortSignal): Promise<Record<string, unknown>> {
    const observedAt = new Date();
    const t0 = performance.now();
    let items: T[];
    try {
      items = await this.spec.list(signal);
    } catch (err) {
      throw new CycleError("list", this.spec.classifyListError?.(err) ?? "list_failed", err);
    }
    const listS = (performance.now() - t0) / 1000;
    this.metrics.listDuration.observe({ store: this.store }, listS);
    this.metrics.items.set({ store: this.store }, items.length);
    if (this.spec.reconcile) {
      try {
        items = await this.spec.reconcile(items, signal);
      } catch (err) {
        this.metrics.errors.inc({ store: this.store, reason: "reconcile_failed" });
        this.log.warn(
          { store: this.store, err: describe(err) },
          "reconcile step failed; pushing the listed view anyway",
        );
      }
    }
    const t1 = performance.now();
    let result: Record<string, unknown>;
    try {
      result = await this.spec.push(items, observedAt, signal);
    } catch (err) {
      throw new CycleError("push", hubReason(err), err);
    }
    const pushS = (performance.now() - t1) / 1000;
    this.metrics.pushDuration.observe({ store: this.store }, pushS);
    this.lastSuccessAt = Date.now();
    this.cycles++;
    this.metrics.lastSuccess.set({ store: this.store }, this.lastSuccessAt / 1000);
    this.log.info(
      {
        store: this.store,
        items: items.length,
        listMs: Math.round(listS * 1000),
        pushMs: Math.round(pushS * 1000),
        ...result,
      },
      "reflector cycle done",
    );
    return result;
  }
}

export class ReflectorGaveUp extends Error {
  constructor(
    readonly store: string,
    readonly failures: number,
  ) {
    super(`reflector ${store} failed ${failures} cycles in a row`);
  }
}

class CycleError extends Error {
  constructor(
    readonly stage: "list" | "push",
    readonly reason: string,
    override readonly cause: unknown,
  ) {
    super(`${stage} failed`);
  }
}

function hubReason(err: unknown): string {
  if (err instanceof HubApiError) {
    if (err.status === 401 || err.status === 403) return "hub_unauthorized";
    if (err.status === 409) return "hub_conflict";
    return err.status >= 500 || err.status === 429 ? "hub_unavailable" : "hub_rejected";
  }
  return "hub_unavailable";
}

/** Error to log: message and code, never a request with its headers (tokens). */
export function describe(err: unknown): { message: string; name?: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
    return {
      name: err.name,
      message:
        err.cause instanceof Error && err.message === "fetch failed"
          ? `fetch failed: ${err.cause.message}`
          : err.message,
      ...(typeof code === "string" ? { code } : {}),
    };
  }
  return { message: String(err) };
}
