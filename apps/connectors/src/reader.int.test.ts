/**
 * The feed reader against real PostgreSQL, with the hub not answering (nothing listens on its
 * port): what the freshness gauge the FleetManagerMatrixFeedStalled alert reads says meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubClient } from "@fm/clients";
import { MATRIX_OLDEST_UNDELIVERED_EVENT_AGE } from "@fm/domain";
import { freePort } from "@fm/test-support/ports";
import { createConnectorMetrics } from "./metrics.ts";
import { QueueStore } from "./queue/store.ts";
import { FeedReader } from "./reader.ts";
import { connectorDatabase } from "./testing/connector-db.ts";

let dbh: Awaited<ReturnType<typeof connectorDatabase>>;
beforeAll(async () => {
  dbh = await connectorDatabase();
});
afterAll(() => dbh?.close());

const until = async (what: () => Promise<boolean>) => {
  const deadline = Date.now() + 10_000;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("the feed reader", () => {
  it("unable to read the feed: past a read's longest time the freshness gauge counts from its last catch-up", async () => {
    const name = "matrix-stalled";
    const store = new QueueStore(dbh.pool, name);
    await store.commitSnapshot({ position: "5", head: "5", records: [] });
    const caughtUpAt = (await store.state())!.caughtUpAt.getTime();
    let now = Date.now();
    const hub = new HubClient({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      token: async () => "unused",
      maxAttempts: 1,
      timeoutMs: 1000,
    });
    const metrics = createConnectorMetrics(name, { stats: () => store.stats(), lag: () => reader.lag() });
    const reader = new FeedReader({
      hub,
      store,
      transform: { connector: name, siteIds: new Set() },
      sites: ["sin1"],
      pageSize: 100,
      waitS: 20,
      stallAfterMs: 80_000,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      metrics,
      log: pino({ level: "silent" }),
      onEnqueued: () => {},
      now: () => now,
    });
    const age = async () =>
      Number(
        (await metrics.registry.metrics())
          .split("\n")
          .find((l) => l.startsWith(`${MATRIX_OLDEST_UNDELIVERED_EVENT_AGE}{`))
          ?.split(" ")
          .at(-1),
      );
    const stop = new AbortController();
    const running = reader.run(stop.signal);
    try {
      await until(async () => (await store.state())!.lastErrorClass === "hub_unavailable");
      // Within a long-poll's time a failed read may be a blip: nothing is known to be unread.
      now += 60_000;
      expect(reader.lag()).toEqual({ events: 0, seconds: 0 });
      expect(await age()).toBe(0);
      // Past it, whatever the hub committed since the reader last caught up may be unread.
      now += 30 * 60_000;
      expect(reader.lag().seconds).toBeCloseTo((now - caughtUpAt) / 1000, 0);
      expect(await age()).toBeGreaterThan(900);
      expect((await store.stats()).undelivered).toBe(0);
    } finally {
      stop.abort();
      await running;
    }
  });
});
