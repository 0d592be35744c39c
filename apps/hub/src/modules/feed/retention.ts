/**
 * Feed retention: deletes events older than the retention period, oldest positions first, in
 * bounded batches (each its own short transaction, so writers and readers never wait long on
 * it). Every hub replica runs it; they queue on the one state row, and a purge that finds
 * nothing old deletes nothing, so running it twice is harmless.
 */
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { PrismaClient } from "../../db/client.ts";
import type { FeedRepo } from "./repo.ts";

export interface FeedRetentionOptions {
  prisma: PrismaClient;
  repo: Pick<FeedRepo, "purgeBatch">;
  /** Events older than this are purged, milliseconds. */
  retentionMs: number;
  /** How often to purge, milliseconds. */
  intervalMs: number;
  /** Events deleted per transaction. */
  batch?: number;
  log: Pick<Logger, "info" | "warn">;
  registry: Registry;
  now?: () => Date;
}

export class FeedRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private readonly purged: Counter;
  private readonly now: () => Date;

  constructor(private readonly o: FeedRetentionOptions) {
    this.now = o.now ?? (() => new Date());
    this.purged = new Counter({
      name: "fleet_manager_feed_events_purged_total",
      help: "Inventory feed events this hub process deleted because they were older than the feed's retention",
      registers: [o.registry],
    });
  }

  /** Purges every event older than retention now; returns how many it deleted. */
  async purgeOnce(): Promise<number> {
    const cutoff = new Date(this.now().getTime() - this.o.retentionMs);
    const batch = this.o.batch ?? 5000;
    let total = 0;
    for (;;) {
      const { deleted, purgedThrough } = await this.o.repo.purgeBatch(this.o.prisma, cutoff, batch);
      total += deleted;
      this.purged.inc(deleted);
      if (deleted < batch) {
        if (total) this.o.log.info({ purged: total, purgedThrough: purgedThrough.toString() }, "feed events purged");
        return total;
      }
    }
  }

  start(): void {
    const tick = () => {
      this.running = this.purgeOnce()
        .catch((err: unknown) => this.o.log.warn({ err }, "feed purge failed; retrying at the next interval"))
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.timer = setTimeout(tick, this.o.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, Math.min(this.o.intervalMs, 5000)).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
