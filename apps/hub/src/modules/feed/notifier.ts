/**
 * Wakes long-polling feed readers when a writer commits (NOTIFY inventory_events). Readers
 * also re-check on a short tick, so a lost notification only delays them.
 */
import type { PgListener } from "../../lib/pg-listener.ts";

export class FeedNotifier {
  private waiters = new Set<() => void>();
  /** Set once the hub shuts down: readers answer with what they have instead of waiting on. */
  closed = false;
  /** Called on every notification, before waiters wake (the hub sequences here). */
  onNotify: (() => Promise<unknown>) | undefined;

  constructor(listener: PgListener | undefined) {
    listener?.on("inventory_events", () => void this.fire());
  }

  private async fire(): Promise<void> {
    await this.onNotify?.().catch(() => {});
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves on the next notification, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.waiters]) w();
  }
}
