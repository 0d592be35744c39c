/**
 * Wakes long-polling feed readers when a writer commits: one LISTEN connection per hub,
 * fanned out in process. If the connection drops, it reconnects with backoff; readers also
 * re-check on a short tick, so a lost notification only delays them.
 */
import type pg from "pg";
import type { FastifyBaseLogger } from "fastify";

export class FeedNotifier {
  private client: pg.PoolClient | undefined;
  private waiters = new Set<() => void>();
  private closed = false;
  private retryMs = 250;
  /** Called on every notification, before waiters wake (the hub sequences here). */
  onNotify: (() => Promise<unknown>) | undefined;

  constructor(
    private readonly pool: pg.Pool | undefined,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    if (!this.pool || this.closed) return;
    try {
      const client = await this.pool.connect();
      client.on("notification", () => void this.fire());
      client.on("error", (err) => {
        this.log.warn({ err: err.message }, "feed LISTEN connection lost; reconnecting");
        client.release(err);
        this.client = undefined;
        this.scheduleReconnect();
      });
      await client.query("LISTEN inventory_events");
      this.client = client;
      this.retryMs = 250;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "feed LISTEN failed; retrying");
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const t = setTimeout(() => void this.start(), this.retryMs);
    t.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  private async fire(): Promise<void> {
    await this.onNotify?.().catch(() => {});
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves on the next notification, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
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

  async close(): Promise<void> {
    this.closed = true;
    for (const w of [...this.waiters]) w();
    const c = this.client;
    this.client = undefined;
    if (c) {
      await c.query("UNLISTEN *").catch(() => {});
      c.release();
    }
  }
}
