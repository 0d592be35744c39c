/**
 * The source side: reads the hub's inventory feed (long-poll) from the durable cursor, turns
 * each page into records and commits records and cursor together (./queue/store.ts). With no
 * cursor yet, or when the hub answers 410 feed_cursor_expired (the cursor is older than the
 * hub's retention), it reads the hub's consistent snapshot instead and continues the feed from
 * the snapshot's position: no gap, no double.
 */
import type { Logger } from "pino";
import { FeedCursorExpiredError, HubApiError, backoffDelay, sleepUnlessAborted, type HubClient } from "@fm/clients";
import type { FeedPage } from "@fm/domain";
import type { ConnectorMetrics, FeedLag } from "./metrics.ts";
import { describeError } from "./log.ts";
import { CursorMoved, type Enqueue, type QueueStore } from "./queue/store.ts";
import type { ErrorClass } from "./sink/sink.ts";
import { recordsOfEvent, recordsOfSnapshot, type TransformContext } from "./transform.ts";

export interface ReaderOptions {
  hub: Pick<HubClient, "readFeed" | "readSnapshot">;
  store: QueueStore;
  transform: TransformContext;
  sites: readonly string[];
  pageSize: number;
  waitS: number;
  /**
   * No successful read for this long (longer than a long-poll and its retries can take): the
   * reader no longer knows what the hub committed since it last caught up, and counts it as lag.
   */
  stallAfterMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  metrics: ConnectorMetrics;
  log: Logger;
  /** Called after a commit that queued records: wakes the deliverer. */
  onEnqueued(): void;
  now?: () => number;
}

export class FeedReader {
  /** Pages committed by this process: readiness. */
  pages = 0;
  private position: string | undefined;
  private head = "0";
  private caughtUpAt = 0;
  /** Last successful feed page or snapshot (this process). */
  private readAt: number;
  private readonly now: () => number;
  /**
   * The read of the page after the one being committed, started before that commit (one page
   * ahead, as a Kafka consumer fetches): the hub's answer and the queue's commit overlap. It is
   * used only when the cursor committed is the position it was read after; any failure (of the
   * commit or of this read) drops it, and the next read starts from the committed cursor.
   */
  private ahead: { after: string; page: Promise<FeedPage> } | undefined;

  constructor(private readonly o: ReaderOptions) {
    this.now = o.now ?? Date.now;
    this.readAt = this.now();
  }

  /**
   * Events known to be unread, and seconds since the reader last had every event: the age of the
   * oldest change it may not have read. While it cannot read at all (the hub down, its client
   * refused), the head it knows stands still, so "no event known unread" proves nothing: past
   * `stallAfterMs` without a read, the lag runs from the last catch-up as when known behind.
   */
  lag(): FeedLag {
    if (this.position === undefined) return { events: 0, seconds: 0 };
    const now = this.now();
    const events = Math.max(0, Number(BigInt(this.head) - BigInt(this.position)));
    const stalled = now - this.readAt > this.o.stallAfterMs;
    return { events, seconds: events > 0 || stalled ? Math.max(0, (now - this.caughtUpAt) / 1000) : 0 };
  }

  /** Runs until the signal aborts; rejects only when another instance moved the cursor. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.position === undefined) {
          const state = await this.o.store.state();
          if (state) {
            this.position = state.position;
            this.head = state.head;
            this.caughtUpAt = state.caughtUpAt.getTime();
          } else {
            await this.snapshot("start", signal);
            continue;
          }
        }
        await this.page();
        failures = 0;
      } catch (caught) {
        this.ahead = undefined;
        if (signal.aborted) break;
        if (caught instanceof CursorMoved) throw caught;
        let err = caught;
        if (caught instanceof FeedCursorExpiredError) {
          this.o.metrics.failures.inc({ reason: "feed_cursor_expired" });
          await this.o.store.recordError("feed_cursor_expired").catch(() => {});
          this.o.log.warn({ after: this.position }, "feed cursor older than the hub keeps: reading a snapshot");
          try {
            await this.snapshot("cursor_expired", signal);
            continue;
          } catch (snapErr) {
            err = snapErr;
          }
        }
        failures++;
        const reason = hubErrorClass(err);
        const retryInMs = backoffDelay(failures, this.o.backoffBaseMs, this.o.backoffMaxMs);
        this.o.metrics.failures.inc({ reason });
        await this.o.store.recordError(reason).catch(() => {});
        this.o.log.error({ reason, failures, retryInMs, err: describeError(err) }, "feed read failed");
        await sleepUnlessAborted(retryInMs, signal);
      }
    }
  }

  private read(after: string): Promise<FeedPage> {
    return this.o.hub.readFeed({ after, limit: this.o.pageSize, wait: this.o.waitS, site: this.o.sites });
  }

  private async page(): Promise<void> {
    const after = this.position!;
    const ahead = this.ahead?.after === after ? this.ahead.page : this.read(after);
    this.ahead = undefined;
    const page = await ahead;
    const records = page.items.flatMap((e) => recordsOfEvent(e, this.o.transform));
    // The next page is read while this one commits. Its failure surfaces when it is awaited;
    // until then it must not count as an unhandled rejection.
    const next = { after: page.nextAfter, page: this.read(page.nextAfter) };
    next.page.catch(() => {});
    this.ahead = next;
    await this.o.store.commitPage({ after, nextAfter: page.nextAfter, head: page.head, records });
    this.position = page.nextAfter;
    this.head = BigInt(page.head) > BigInt(page.nextAfter) ? page.head : page.nextAfter;
    this.readAt = this.now();
    if (this.head === this.position) this.caughtUpAt = this.readAt;
    this.pages++;
    if (records.length) {
      this.o.metrics.enqueued.inc({ origin: "feed" }, records.length);
      this.o.onEnqueued();
    }
    if (page.items.length)
      this.o.log.debug(
        { after, nextAfter: page.nextAfter, events: page.items.length, records: records.length },
        "feed page",
      );
  }

  /** The whole snapshot is queued with its position as the cursor in one transaction. */
  private async snapshot(reason: "start" | "cursor_expired", signal: AbortSignal): Promise<void> {
    const started = this.now();
    let header: { position: string; takenAt: string } | undefined;
    const records: Enqueue[] = [];
    for await (const line of this.o.hub.readSnapshot({ sites: this.o.sites, signal })) {
      if (line.kind === "snapshot") header = { position: line.position, takenAt: line.takenAt };
      else if (line.kind === "site" || line.kind === "device")
        records.push(...recordsOfSnapshot(line, header!, this.o.transform));
    }
    if (!header) throw new Error("the snapshot had no header line");
    await this.o.store.commitSnapshot({ position: header.position, head: header.position, records });
    this.position = header.position;
    this.head = header.position;
    this.readAt = this.caughtUpAt = this.now();
    this.pages++;
    this.o.metrics.snapshots.inc({ reason });
    this.o.metrics.enqueued.inc({ origin: "snapshot" }, records.length);
    this.o.log.info(
      { reason, position: header.position, records: records.length, durationMs: this.now() - started },
      "snapshot queued",
    );
    if (records.length) this.o.onEnqueued();
  }
}

/** The error class of a failed read: the hub not answering, refusing us, or anything else. */
export function hubErrorClass(err: unknown): ErrorClass {
  if (err instanceof HubApiError) {
    // The clients' one table (statusClass); 403 is final there, and named unauthorized here.
    if (err.statusClass === "auth" || err.status === 403) return "hub_unauthorized";
    return err.outage ? "hub_unavailable" : "internal";
  }
  const { status, error } = (err ?? {}) as { status?: unknown; error?: unknown };
  // openid-client's refused grant carries the token endpoint's status and OAuth error.
  if (typeof status === "number" && typeof error === "string")
    return status === 400 || status === 401 ? "hub_unauthorized" : "hub_unavailable";
  if (err instanceof Error && /did not answer|fetch failed|ECONN|timed out/i.test(err.message))
    return "hub_unavailable";
  return "internal";
}
