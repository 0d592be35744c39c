/**
 * The loop engine every agent loop runs on, whatever its kind:
 *
 *  - a **reflector** (./reflector.ts) lists a source's whole view and pushes it to the hub;
 *  - a **controller** (./controller.ts) observes what is desired against what is, and acts.
 *
 * A loop runs one cycle at start and then one every interval. A failed cycle is retried after an
 * exponential backoff with jitter; after `maxConsecutiveFailures` failed cycles in a row the loop
 * gives up and the process exits 1, so the orchestrator restarts it and the restart-loop alerts
 * see it (runbook: FleetManagerOpenStackStateStale, FleetManagerWorkflowAgentStale). Nothing is
 * lost meanwhile: every cycle starts from the whole current state, so the first one that
 * succeeds carries every change since the last.
 *
 * Both kinds export the same metrics, `fleet_manager_reflector_*{store}`: the names the runbook's
 * alerts and dashboards read, whatever the loop does.
 */
import type { Logger } from "pino";
import { HubApiError } from "@fm/clients";
import type { AgentMetrics } from "./metrics.ts";
import { backoffDelay, sleep } from "./backoff.ts";
import { describeError } from "./log.ts";

export type LoopKind = "reflector" | "controller";

/** What one cycle gets to work with. */
export interface CycleContext {
  signal: AbortSignal;
  metrics: AgentMetrics;
  log: Logger;
  now: () => number;
}

export interface LoopSpec {
  kind: LoopKind;
  /** Store name, the `store` label of the metrics, e.g. `ironic-nodes-overcloud` or `workflow`. */
  store: string;
  /**
   * One cycle. Resolves with the fields of its "cycle done" log line; rejects with a
   * CycleFailure (stage and metric reason) or any error (reason `internal`).
   */
  cycle(c: CycleContext): Promise<Record<string, unknown>>;
}

export interface LoopOptions {
  intervalMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxConsecutiveFailures: number;
}

export class Loop {
  lastSuccessAt: number | undefined;
  consecutiveFailures = 0;
  cycles = 0;
  private running: Promise<void> | undefined;
  private readonly startedAt: number;

  constructor(
    readonly spec: LoopSpec,
    private readonly opts: LoopOptions,
    private readonly metrics: AgentMetrics,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    metrics.consecutiveFailures.set({ store: spec.store }, 0);
  }

  get store(): string {
    return this.spec.store;
  }

  get kind(): LoopKind {
    return this.spec.kind;
  }

  /** Seconds since the last success (since start if none yet). */
  ageSeconds(now = this.now()): number {
    return Math.max(0, (now - (this.lastSuccessAt ?? this.startedAt)) / 1000);
  }

  /**
   * Runs until `signal` aborts (resolves) or the failure budget is spent (rejects with
   * LoopGaveUp). A cycle in progress when the signal aborts is finished, not cut.
   */
  run(signal: AbortSignal): Promise<void> {
    this.running ??= this.loop(signal);
    return this.running;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const { kind, store } = this;
    this.log.info({ store, intervalS: this.opts.intervalMs / 1000 }, `${kind} started`);
    while (!signal.aborted) {
      let delay = this.opts.intervalMs;
      try {
        await this.cycle(signal);
        this.consecutiveFailures = 0;
      } catch (err) {
        this.consecutiveFailures++;
        const { stage, reason } = err instanceof CycleFailure ? err : { stage: "cycle", reason: "internal" };
        const cause = err instanceof CycleFailure ? err.cause : err;
        this.metrics.errors.inc({ store, reason });
        delay = backoffDelay(this.consecutiveFailures, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
        this.log.error(
          {
            store,
            stage,
            reason,
            consecutiveFailures: this.consecutiveFailures,
            retryInMs: delay,
            err: describeError(cause),
          },
          `${kind} cycle failed (${this.consecutiveFailures}/${this.opts.maxConsecutiveFailures})`,
        );
        if (this.consecutiveFailures >= this.opts.maxConsecutiveFailures) {
          this.metrics.consecutiveFailures.set({ store }, this.consecutiveFailures);
          throw new LoopGaveUp(store, this.consecutiveFailures);
        }
      }
      this.metrics.consecutiveFailures.set({ store }, this.consecutiveFailures);
      await sleep(delay, signal);
    }
    this.log.info({ store }, `${kind} stopped`);
  }

  /** One cycle, recorded as a success when it resolves. Public so tests can drive a single cycle. */
  async cycle(signal: AbortSignal): Promise<Record<string, unknown>> {
    const fields = await this.spec.cycle({ signal, metrics: this.metrics, log: this.log, now: this.now });
    this.lastSuccessAt = this.now();
    this.cycles++;
    this.metrics.lastSuccess.set({ store: this.store }, this.lastSuccessAt / 1000);
    this.log.info({ store: this.store, ...fields }, `${this.kind} cycle done`);
    return fields;
  }
}

export class LoopGaveUp extends Error {
  constructor(
    readonly store: string,
    readonly failures: number,
  ) {
    super(`loop ${store} failed ${failures} cycles in a row`);
  }
}

/** A failed cycle: the stage that failed and the `reason` label of its error count. */
export class CycleFailure extends Error {
  constructor(
    readonly stage: string,
    readonly reason: string,
    override readonly cause: unknown,
  ) {
    super(`${stage} failed`);
  }
}

/** The metric reason of a failed call to the hub. */
export function hubReason(err: unknown): string {
  if (err instanceof HubApiError) {
    if (err.status === 401 || err.status === 403) return "hub_unauthorized";
    if (err.status === 409) return "hub_conflict";
    return err.status >= 500 || err.status === 429 ? "hub_unavailable" : "hub_rejected";
  }
  return "hub_unavailable";
}
