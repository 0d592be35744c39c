/**
 * The sink side: delivers the queue in order, in batches, at least once. A batch the sink
 * cannot take now (down, throttled, token refused) is retried, whole, after an exponential
 * backoff with jitter, capped (or the sink's Retry-After when longer); nothing behind it moves
 * meanwhile, so records of a device arrive in order. A batch the sink refuses for good is cut in
 * halves until the one refused record is found; that record goes to the dead letters with the
 * sink's reason, the others are delivered.
 *
 * Later records of a dead-lettered device are delivered as usual: each record carries the
 * device's whole state, so the next one supersedes the refused one at the receiver, and holding
 * them back would leave the device stale for good over one bad version.
 *
 * A sink that refuses record after record with nothing accepted in between is not looking at bad
 * records but is set up wrong (a table without streaming ingestion, a webhook path that 400s
 * everything): past MAX_REFUSED_IN_A_ROW dead letters the deliverer stops dead-lettering and
 * retries as `sink_config`, so a misconfigured sink cannot drain the queue into the dead letters.
 */
import type { Logger } from "pino";
import { backoffDelay, sleepUnlessAborted } from "@fm/clients";
import type { ConnectorMetrics } from "./metrics.ts";
import { describeError } from "./log.ts";
import type { Queued, QueueStore } from "./queue/store.ts";
import type { DeliveryOutcome, Sink } from "./sink/sink.ts";

export interface DelivererOptions {
  store: QueueStore;
  sink: Sink;
  batchSize: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  metrics: ConnectorMetrics;
  log: Logger;
  /** How long an empty queue waits before looking again without a wake-up. */
  idleMs?: number;
}

type Settled = { kind: "ok" } | Extract<DeliveryOutcome, { kind: "retry" }>;

/** Records dead-lettered one after another, nothing accepted between, before the sink itself is blamed. */
export const MAX_REFUSED_IN_A_ROW = 3;

export class Deliverer {
  consecutiveFailures = 0;
  /** Dead letters since the sink last accepted a record (this process's count). */
  private refusedInARow = 0;
  private wakeUp: (() => void) | undefined;
  /**
   * A wake-up came since the loop last looked at the queue. Without it a commit landing while
   * `next()` is already answering "empty" would wake nobody, and its records would wait out the
   * whole idle timer (a second by default: the commit-to-ack p99 of the bench).
   */
  private woken = false;

  constructor(private readonly o: DelivererOptions) {}

  /** New records are queued: stop idling, or do not start to. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let retryInMs = 0;
      try {
        // Cleared before the read: a wake-up from now on is for records this read may not see.
        this.woken = false;
        const batch = await this.o.store.next(this.o.batchSize);
        if (batch.length === 0) {
          await this.idle(signal);
          continue;
        }
        const out = await this.deliver(batch, signal);
        if (out.kind === "ok") {
          if (this.consecutiveFailures > 0)
            this.o.log.info({ after: this.consecutiveFailures }, "sink delivering again");
          this.consecutiveFailures = 0;
          continue;
        }
        if (signal.aborted) break;
        this.consecutiveFailures++;
        retryInMs = Math.max(
          backoffDelay(this.consecutiveFailures, this.o.backoffBaseMs, this.o.backoffMaxMs),
          out.afterMs ?? 0,
        );
        this.o.metrics.failures.inc({ reason: out.errorClass });
        await this.o.store.attempted(batch.map((q) => q.seq));
        await this.o.store.recordError(out.errorClass);
        this.o.log.warn(
          {
            reason: out.errorClass,
            message: out.message,
            records: batch.length,
            failures: this.consecutiveFailures,
            retryInMs,
          },
          "delivery failed; retrying",
        );
      } catch (err) {
        // The connector's own database: nothing was lost, the queue is where it was.
        if (signal.aborted) break;
        this.consecutiveFailures++;
        retryInMs = backoffDelay(this.consecutiveFailures, this.o.backoffBaseMs, this.o.backoffMaxMs);
        this.o.metrics.failures.inc({ reason: "internal" });
        this.o.log.error({ err: describeError(err), retryInMs }, "delivery loop failed");
      }
      await sleepUnlessAborted(retryInMs, signal);
    }
  }

  /** Delivers `batch`, bisecting on a permanent refusal; stops at the first retryable failure. */
  private async deliver(batch: Queued[], signal: AbortSignal): Promise<Settled> {
    const out = await this.o.sink.deliver(
      batch.map((q) => q.record),
      signal,
    );
    if (out.kind === "ok") {
      this.refusedInARow = 0;
      await this.o.store.delivered(batch.map((q) => q.seq));
      this.o.metrics.delivered.inc({ sink: this.o.sink.name }, batch.length);
      return out;
    }
    if (out.kind === "retry") return out;
    if (batch.length === 1) {
      const q = batch[0]!;
      if (this.refusedInARow >= MAX_REFUSED_IN_A_ROW)
        return {
          kind: "retry",
          errorClass: "sink_config",
          message: `the sink refused ${this.refusedInARow} records in a row and accepted none since: its configuration, not the records, is taken to be at fault (last refusal: ${out.reason})`,
        };
      this.refusedInARow++;
      await this.o.store.deadLetter(q, out.reason);
      this.o.metrics.deadLettered.inc();
      this.o.metrics.failures.inc({ reason: "sink_rejected" });
      await this.o.store.recordError("sink_rejected");
      this.o.log.error(
        { recordId: q.recordId, resource: q.resourceKey, reason: out.reason },
        "record refused by the sink: dead-lettered",
      );
      return { kind: "ok" };
    }
    const mid = Math.ceil(batch.length / 2);
    const left = await this.deliver(batch.slice(0, mid), signal);
    return left.kind === "ok" ? this.deliver(batch.slice(mid), signal) : left;
  }

  private idle(signal: AbortSignal): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.o.idleMs ?? 1000);
      signal.addEventListener("abort", done, { once: true });
      this.wakeUp = done;
    });
  }
}
