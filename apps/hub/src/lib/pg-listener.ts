/**
 * One LISTEN connection per hub for PostgreSQL notifications, fanned out to in-process
 * handlers by channel. Reconnects with backoff when the connection drops; callers that
 * cannot afford a lost notification re-check on their own timer too.
 */
import type pg from "pg";
import type { FastifyBaseLogger } from "fastify";

export class PgListener {
  private client: pg.PoolClient | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closed = false;
  private retryMs = 250;
  private readonly reconnectHandlers = new Set<() => void>();

  constructor(
    private readonly pool: pg.Pool | undefined,
    private readonly log: FastifyBaseLogger,
  ) {}

  on(channel: string, handler: (payload: string) => void): void {
    if (!this.handlers.has(channel)) this.handlers.set(channel, new Set());
    this.handlers.get(channel)!.add(handler);
  }

  /** Calls `handler` after each (re)connection: notifications may have been missed while disconnected. */
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.add(handler);
  }

  async start(): Promise<void> {
    if (!this.pool || this.closed) return;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      // close() may have run while the connection was being made: it found nothing to release,
      // so this one is released here, or the pool would never end (a hub that never exits).
      if (this.closed) return void client.release(true);
      this.client = client;
      const held = client;
      held.on("notification", (n) => {
        for (const h of this.handlers.get(n.channel) ?? []) h(n.payload ?? "");
      });
      held.on("error", (err) => {
        // Only the connection we still hold: after close() released it, a server shutting
        // down may still report on it, and releasing it twice would crash the process.
        if (this.client !== held) return;
        this.log.warn({ err: err.message }, "LISTEN connection lost; reconnecting");
        this.client = undefined;
        held.release(err);
        this.scheduleReconnect();
      });
      for (const channel of this.handlers.keys()) await held.query(`LISTEN ${channel}`);
      if (this.closed) return; // close() ran meanwhile and released it
      this.retryMs = 250;
      for (const h of this.reconnectHandlers) h();
    } catch (err) {
      if (client && this.client === client) {
        this.client = undefined;
        client.release(true);
      }
      if (this.closed) return;
      this.log.warn({ err: (err as Error).message }, "LISTEN failed; retrying");
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const t = setTimeout(() => void this.start(), this.retryMs);
    t.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    if (c) {
      await c.query("UNLISTEN *").catch(() => {});
      c.release(true); // destroy it: a connection that listened is not returned to the pool
    }
  }
}
