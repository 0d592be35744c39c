/**
 * The feed reader against real PostgreSQL, with the hub not answering (nothing listens on its
 * port): what the freshness gauge the FleetManagerMatrixFeedStalled alert reads says meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { FeedCursorExpiredError, HubApiError, HubClient } from "@fm/clients";
import { MATRIX_OLDEST_UNDELIVERED_EVENT_AGE, type FeedPage } from "@fm/domain";
import { freePort } from "@fm/test-support/ports";
import { createConnectorMetrics } from "./metrics.ts";
import { QueueStore } from "./queue/store.ts";
import { FeedReader } from "./reader.ts";
import { connectorDatabase } from "./testing/connector-db.ts";
import { device, event, site } from "./testing/fixtures.ts";

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

  /**
   * A reader driven by a scripted hub (each readFeed answers the next step, a step that is a
   * function is awaited) and a clock the test moves. Resolves the reader's promise on abort.
   */
  async function scripted(name: string, snapshots: string[], steps: ((after: string) => Promise<FeedPage>)[]) {
    const store = new QueueStore(dbh.pool, name);
    const sin1 = site("sin1");
    const state = { now: Date.now(), asked: [] as string[], released: false };
    const hub = {
      readFeed: async (q: { after: string }) => {
        state.asked.push(q.after);
        // A long-poll that answers once the test gives the next step (or the test ends).
        while (!steps.length && !state.released) await new Promise((res) => setTimeout(res, 5));
        const step = steps.shift();
        return step ? step(q.after) : page(q.after, q.after);
      },
      async *readSnapshot() {
        yield { kind: "snapshot" as const, position: snapshots.shift()!, takenAt: new Date(state.now).toISOString() };
      },
    } as unknown as Pick<HubClient, "readFeed" | "readSnapshot">;
    const reader: FeedReader = new FeedReader({
      hub,
      store,
      transform: { connector: name, siteIds: new Set([sin1.id]) },
      sites: ["sin1"],
      pageSize: 100,
      waitS: 20,
      stallAfterMs: 80_000,
      backoffBaseMs: 10,
      backoffMaxMs: 20,
      metrics: createConnectorMetrics(name, { stats: () => store.stats(), lag: () => reader.lag() }),
      log: pino({ level: "silent" }),
      onEnqueued: () => {},
      now: () => state.now,
    });
    const stop = new AbortController();
    const running = reader.run(stop.signal);
    const end = async () => {
      stop.abort();
      state.released = true;
      await running;
    };
    return { store, reader, state, sin1, stop: end };
  }
  const page = (nextAfter: string, head: string, items: FeedPage["items"] = []): FeedPage => ({
    items,
    nextAfter,
    head,
  });

  it("after a 410 it resnapshots, keeps the snapshot's position as its cursor, and goes on reading the feed from there", async () => {
    const sin1 = site("sin1");
    const d = device(sin1, "gpu-410");
    const expired = new FeedCursorExpiredError(new HubApiError(410, undefined, "feed_cursor_expired"));
    const later = event(41, "device.updated", d, sin1.id);
    const r = await scripted(
      "matrix-after-410",
      ["5", "40"],
      [
        async () => {
          throw expired;
        },
        async () =>
          page("41", "41", [
            { ...later, siteId: r.sin1.id, data: { ...d, site: { ...d.site, id: r.sin1.id } } },
          ] as FeedPage["items"]),
      ],
    );
    try {
      await until(async () => (await r.store.state())?.position === "41");
      // The feed was asked from the first snapshot, then, after the 410, from the second one's position.
      expect(r.state.asked.slice(0, 2)).toEqual(["5", "40"]);
      // The change committed after the resnapshot is queued, and the process is still reading.
      expect((await r.store.stats()).undelivered).toBeGreaterThanOrEqual(1);
      await until(async () => r.state.asked.length >= 3);
      expect(r.state.asked[2]).toBe("41");
    } finally {
      await r.stop();
    }
  });

  it("once caught up with the feed's head, the freshness gauge counts from that catch-up, not from the snapshot", async () => {
    const steps: ((after: string) => Promise<FeedPage>)[] = [];
    const r = await scripted("matrix-caught-up", ["10"], steps);
    const t0 = r.state.now;
    try {
      await until(async () => r.state.asked.length >= 1);
      // Behind (head 15) 100 s after the snapshot: the lag runs from the snapshot.
      r.state.now = t0 + 100_000;
      steps.push(async () => page("12", "15"));
      await until(async () => r.state.asked.length >= 2);
      await until(async () => r.reader.lag().events === 3);
      expect(r.reader.lag().seconds).toBeCloseTo(100, 0);
      // Caught up at t1 = t0 + 200 s; then no read succeeds past the stall window.
      r.state.now = t0 + 200_000;
      steps.push(async () => page("15", "15"));
      await until(async () => r.state.asked.length >= 3);
      await until(async () => r.reader.lag().events === 0);
      r.state.now = t0 + 200_000 + 80_000 + 60_000;
      // 140 s since the catch-up; counted from the snapshot it would be 340 s.
      expect(r.reader.lag().seconds).toBeCloseTo(140, 0);
    } finally {
      await r.stop();
    }
  });
});
