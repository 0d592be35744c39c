/**
 * The loop engine every agent loop runs on, whatever its kind:
 *
 *  - a **reflector** (./reflector.ts) lists a source's whole view and pushes it to the hub;
 *  - a **controller** (./controller.ts) observes what is desired against what is, and acts.
 *
 * A loop runs one cycle at start and then one every interval. A failed cycle is retried after an
 * exponential backoff with jitter; after `maxConsecutiveFailures` failed cycles in a row that
 * count (see HubOutagePolicy) the loop gives up and the process exits 1, so the orchestrator
 * restarts it and the restart-loop alerts see it (runbook: FleetManagerOpenStackStateStale,
 * FleetManagerWorkflowAgentStale). Nothing is lost meanwhile: every cycle starts from the whole
 * current state, so the first one that succeeds carries every change since the last.
 *
 * Both kinds export the same metrics, `fleet_manager_reflector_*{store}`: the names the runbook's
 * alerts and dashboards read, whatever the loop does.
 */
import type { Logger } from "pino";
import { HubApiError, isOutage, statusClass } from "@fm/clients";
import type { AgentMetrics } from "./metrics.ts";
import { backoffDelay, sleep } from "./backoff.ts";
import { describeError } from "./log.ts";

export type LoopKind = "reflector" | "controller";

/**
 * What an unavailable hub (unreachable, 5xx, 429) does to a loop; the runbook expects each
 * agent's behaviour (docs/runbook.md, "How the agents behave in a hub outage").
 *
 *  - `restart`: the hub is where the loop reads its work (the workflow agent). Such a failure
 *    spends the failure budget like any other, so the process restart-loops through an outage,
 *    and the loop's age is the time since its last successful cycle.
 *  - `ride-out`: the hub only receives what the loop reads elsewhere (the OpenStack agent reads
 *    Ironic). Such a failure is counted in the metrics and retried with backoff but does not
 *    spend the budget, so the process stays up; each retry lists the source again, so the
 *    first push the hub accepts carries the latest view. The loop's age is the time since it
 *    last read its source (CycleContext.observed), whatever the hub did with it. A hub that
 *    answers but refuses (4xx: credentials, a rejected view) still spends the budget: a
 *    restart may fix it, and the alert must see it.
 */
export type HubOutagePolicy = "restart" | "ride-out";

/** What one cycle gets to work with. */
export interface CycleContext {
  signal: AbortSignal;
  metrics: AgentMetrics;
  log: Logger;
  now: () => number;
  /** The cycle has read its source completely at `at` (ms): what a `ride-out` loop's age measures. */
  observed(at: number): void;
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
  /** Default `restart`. */
  hubOutage?: HubOutagePolicy;
}

export interface LoopOptions {
  intervalMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxConsecutiveFailures: number;
}

export class Loop {
  lastSuccessAt: number | undefined;
  /** Last time a cycle read its source completely (only `ride-out` loops' age uses it). */
  lastObservedAt: number | undefined;
  /** Failed cycles in a row, of any kind: what the backoff grows with. */
  consecutiveFailures = 0;
  /** Failed cycles in a row that spend the failure budget. */
  countedFailures = 0;
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

  get hubOutage(): HubOutagePolicy {
    return this.spec.hubOutage ?? "restart";
  }

  /**
   * Seconds since the last success, or for a `ride-out` loop since it last read its source
   * (since start if never).
   */
  ageSeconds(now = this.now()): number {
    const since = this.hubOutage === "ride-out" ? this.lastObservedAt : this.lastSuccessAt;
    return Math.max(0, (now - (since ?? this.startedAt)) / 1000);
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
    const { maxConsecutiveFailures: max } = this.opts;
    this.log.info({ store, intervalS: this.opts.intervalMs / 1000, hubOutage: this.hubOutage }, `${kind} started`);
    while (!signal.aborted) {
      let delay = this.opts.intervalMs;
      try {
        const hubWasDown = this.consecutiveFailures > this.countedFailures;
        await this.cycle(signal);
        if (hubWasDown) this.log.info({ store }, `hub available again: ${kind} pushed its latest view`);
        this.consecutiveFailures = 0;
        this.countedFailures = 0;
      } catch (err) {
        const { stage, reason } = err instanceof CycleFailure ? err : { stage: "cycle", reason: "internal" };
        const cause = err instanceof CycleFailure ? err.cause : err;
        const counted = !(this.hubOutage === "ride-out" && reason === "hub_unavailable");
        this.consecutiveFailures++;
        if (counted) this.countedFailures++;
        this.metrics.errors.inc({ store, reason });
        delay = backoffDelay(this.consecutiveFailures, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
        this.log.error(
          {
            store,
            stage,
            reason,
            consecutiveFailures: this.consecutiveFailures,
            countedFailures: this.countedFailures,
            retryInMs: delay,
            err: describeError(cause),
          },
          counted
            ? `${kind} cycle failed (${this.countedFailures}/${max})`
            : `${kind} cycle failed: hub unavailable, riding it out (${this.countedFailures}/${max} counted)`,
        );
        if (this.countedFailures >= max) {
          this.metrics.consecutiveFailures.set({ store }, this.consecutiveFailures);
          throw new LoopGaveUp(store, this.countedFailures);
        }
      }
      this.metrics.consecutiveFailures.set({ store }, this.consecutiveFailures);
      await sleep(delay, signal);
    }
    this.log.info({ store }, `${kind} stopped`);
  }

  /** One cycle, recorded as a success when it resolves. Public so tests can drive a single cycle. */
  async cycle(signal: AbortSignal): Promise<Record<string, unknown>> {
    const fields = await this.spec.cycle({
      signal,
      metrics: this.metrics,
      log: this.log,
      now: this.now,
      observed: (at) => (this.lastObservedAt = Math.max(this.lastObservedAt ?? at, at)),
    });
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

/**
 * The metric reason of a failed call to the hub: `hub_unavailable` only when it did not answer,
 * or answered that it cannot now (5xx, 429). A refused token grant (openid-client's
 * ResponseBodyError carries the token endpoint's status) is the hub answering, not an outage.
 */
export function hubReason(err: unknown): string {
  const status = err instanceof HubApiError ? err.status : tokenEndpointStatus(err);
  if (status === undefined) return "hub_unavailable";
  // The class from the clients' one table (statusClass); the labels name 403 and 409 apart.
  if (statusClass(status, "hub") === "auth" || status === 403) return "hub_unauthorized";
  if (status === 409) return "hub_conflict";
  return isOutage(status, "hub") ? "hub_unavailable" : "hub_rejected";
}

function tokenEndpointStatus(err: unknown): number | undefined {
  if (!(err instanceof Error)) return undefined;
  const { status, error } = err as { status?: unknown; error?: unknown };
  return typeof status === "number" && typeof error === "string" ? status : undefined;
}
