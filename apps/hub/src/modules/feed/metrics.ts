import { Gauge, type Registry } from "prom-client";
import type { FeedRepo } from "./repo.ts";
import type { PrismaClient } from "../../db/client.ts";

/**
 * The feed's head and its oldest kept position, read from the database at scrape time so every
 * replica reports the same. head - a reader's cursor is its lag in events.
 */
export function registerFeedMetrics(registry: Registry, prisma: PrismaClient, repo: Pick<FeedRepo, "bounds">): void {
  let bounds: Promise<{ head: bigint; oldest: bigint | null }> | undefined;
  // One query per scrape for both gauges.
  const read = () => (bounds ??= repo.bounds(prisma).finally(() => setImmediate(() => (bounds = undefined))));
  new Gauge({
    name: "fleet_manager_feed_head_position",
    help: "Highest position the inventory feed has given",
    registers: [registry],
    async collect() {
      this.set(Number((await read()).head));
    },
  });
  new Gauge({
    name: "fleet_manager_feed_oldest_position",
    help: "Oldest position the inventory feed still keeps (the head + 1 when it keeps none)",
    registers: [registry],
    async collect() {
      const b = await read();
      this.set(Number(b.oldest ?? b.head + 1n));
    },
  });
}
