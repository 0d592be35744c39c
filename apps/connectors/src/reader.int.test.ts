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

  /** Device changes at positions from + 1 … to, of sin1 as the reader knows it. */
  const changes = (r: { sin1: ReturnType<typeof site> }, from: number, to: number): FeedPage["items"] =>
    Array.from<unknown, FeedPage["items"][number]>({ length: to - from }, (_, i) =>
      event(from + i + 1, "device.updated", { ...device(r.sin1, `gpu-${from + i}`), version: 1 }, r.sin1.id),
    );
  /** The queued records' feed positions, in queue (delivery) order. */
  const queuedPositions = async (store: QueueStore) => (await store.next(1000)).map((q) => q.record.feedPosition);

  it("reads the next page while the current one commits, and commits the pages one after another, in order", async () => {
    const steps: ((after: string) => Promise<FeedPage>)[] = [];
    const r = await scripted("matrix-read-ahead", ["10"], steps);
    const commits: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((res) => (release = res));
    const commitPage = r.store.commitPage.bind(r.store);
    r.store.commitPage = async (p) => {
      commits.push(`${p.after}->${p.nextAfter}`);
      // The first page's commit waits until the test has seen the read ahead.
      if (commits.length === 1) await held;
      return commitPage(p);
    };
    try {
      await until(async () => r.state.asked.length >= 1);
      steps.push(
        async () => page("12", "20", changes(r, 10, 12)),
        async () => page("15", "20", changes(r, 12, 15)),
        async () => page("20", "20", changes(r, 15, 20)),
      );
      // While the page 10 -> 12 is being committed, the page after 12 is already asked for...
      await until(async () => r.state.asked.includes("12"));
      expect(commits).toEqual(["10->12"]);
      // ...and nothing of it is committed before the page it follows.
      expect((await r.store.state())!.position).toBe("10");
      expect(await queuedPositions(r.store)).toEqual([]);
      release();
      await until(async () => (await r.store.state())?.position === "20");
      expect(commits).toEqual(["10->12", "12->15", "15->20"]);
      expect(r.state.asked.slice(0, 4)).toEqual(["10", "12", "15", "20"]);
      expect(await queuedPositions(r.store)).toEqual(["11", "12", "13", "14", "15", "16", "17", "18", "19", "20"]);
    } finally {
      release();
      await r.stop();
    }
  });

  it("a read ahead that fails is not taken: the reader reads again from the committed cursor", async () => {
    const steps: ((after: string) => Promise<FeedPage>)[] = [];
    const r = await scripted("matrix-read-ahead-fails", ["10"], steps);
    try {
      steps.push(
        async () => page("12", "15", changes(r, 10, 12)),
        // The read ahead, from 12 while 10 -> 12 commits: the hub answers 503.
        async () => {
          throw new HubApiError(503, undefined, "unavailable");
        },
        async (after) => page("15", "15", changes(r, Number(after), 15)),
      );
      await until(async () => (await r.store.state())?.position === "15");
      // 12 twice: the failed read ahead, then the retry from the cursor the first page committed.
      expect(r.state.asked.slice(0, 3)).toEqual(["10", "12", "12"]);
      expect((await r.store.state())!.lastErrorClass).toBe("hub_unavailable");
      expect(await queuedPositions(r.store)).toEqual(["11", "12", "13", "14", "15"]);
    } finally {
      await r.stop();
    }
  });

  it("a commit that fails drops the read ahead: the same page is read again from the committed cursor, queued once", async () => {
    const steps: ((after: string) => Promise<FeedPage>)[] = [];
    const r = await scripted("matrix-commit-fails", ["10"], steps);
    const commitPage = r.store.commitPage.bind(r.store);
    let failed = false;
    r.store.commitPage = async (p) => {
      if (!failed) {
        failed = true;
        throw new Error("connection terminated unexpectedly");
      }
      return commitPage(p);
    };
    try {
      await until(async () => r.state.asked.length >= 1);
      steps.push(
        async () => page("12", "15", changes(r, 10, 12)),
        // The read ahead from 12, answered while the commit of 10 -> 12 fails: never committed.
        async () => page("15", "15", changes(r, 12, 15)),
        // The page again from the cursor that stayed at 10, then the rest.
        async () => page("12", "15", changes(r, 10, 12)),
        async () => page("15", "15", changes(r, 12, 15)),
      );
      await until(async () => (await r.store.state())?.position === "15");
      expect(r.state.asked.slice(0, 4)).toEqual(["10", "12", "10", "12"]);
      expect(await queuedPositions(r.store)).toEqual(["11", "12", "13", "14", "15"]);
    } finally {
      await r.stop();
    }
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
