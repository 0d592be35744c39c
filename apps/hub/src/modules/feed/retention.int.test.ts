/**
 * Feed retention on a real database: old events are purged in bounded batches, a reader whose
 * cursor is older answers 410 telling it to resnapshot, and positions are never reused even once
 * every event is gone. The purge's clock is the test's; the events' times are the database's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { FeedPageSchema, ProblemSchema } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { FeedRetention } from "./retention.ts";
import { feedRepo } from "./repo.ts";

const HOUR = 3600_000;
let hub: TestHub;
let clock = new Date();
beforeAll(async () => {
  hub = await startTestHub({ feedRetention: { retentionMs: HOUR, intervalMs: HOUR, now: () => clock } });
  await hub.app.ready();
});
afterAll(() => hub.close());

const createSite = async (slug: string) => {
  const res = await hub.app.inject({ method: "POST", url: "/api/v1/sites", payload: { slug, name: slug } });
  expect(res.statusCode).toBe(201);
};
const read = (after: string) => hub.app.inject({ url: `/api/v1/feeds/inventory?after=${after}&limit=1000` });
const metric = async (name: string): Promise<number> => {
  const text = (await hub.app.inject({ url: "/metrics" })).body;
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
};
/** The time the database gave the latest event, as the purge compares it. */
const lastOccurredAt = async () =>
  (await hub.db.prisma.inventoryEvent.findFirstOrThrow({ orderBy: { seq: "desc" } })).occurredAt;

describe("feed retention", () => {
  it("purges events older than retention in batches; an older cursor gets 410, a current one reads on", async () => {
    for (const slug of ["ret-a", "ret-b", "ret-c", "ret-d", "ret-e"]) await createSite(slug);
    const oldUntil = await lastOccurredAt();
    await new Promise((r) => setTimeout(r, 20)); // the next events are younger in milliseconds
    await createSite("ret-young");
    const before = FeedPageSchema.parse((await read("0")).json());
    const young = before.items.find((e) => (e.data as { slug?: string }).slug === "ret-young")!;

    // Retention ends just after the old events: they go, the young one stays.
    clock = new Date(oldUntil.getTime() + 1 + HOUR);
    const batches: number[] = [];
    const retention = new FeedRetention({
      prisma: hub.db.prisma,
      repo: { purgeBatch: (...args) => feedRepo.purgeBatch(...args).then((r) => (batches.push(r.deleted), r)) },
      retentionMs: HOUR,
      intervalMs: HOUR,
      batch: 2,
      log: hub.app.log,
      registry: new Registry(),
      now: () => clock,
    });
    expect(await retention.purgeOnce()).toBe(5);
    expect(batches).toEqual([2, 2, 1]);
    const purgedThrough = BigInt(young.position) - 1n;

    const gone = await read("0");
    expect(gone.statusCode).toBe(410);
    expect(gone.headers["content-type"]).toContain("application/problem+json");
    const problem = ProblemSchema.parse(gone.json());
    expect(problem).toMatchObject({ status: 410, code: "feed_cursor_expired" });
    expect(problem.detail).toContain("/api/v1/feeds/inventory/snapshot");
    expect((await read((purgedThrough - 1n).toString())).statusCode).toBe(410);

    const current = FeedPageSchema.parse((await read(purgedThrough.toString())).json());
    expect(current.items.map((e) => e.position)).toEqual([young.position]);
    expect(current.head).toBe(before.head);
  });

  it("keeps the head when every event is purged: the next event continues the positions", async () => {
    const head = (await feedRepo.head(hub.db.prisma)).toString();
    clock = new Date(Date.now() + 2 * HOUR);
    await hub.app.feedRetention.purgeOnce();
    expect(await hub.db.prisma.inventoryEvent.count()).toBe(0);
    const empty = FeedPageSchema.parse((await read(head)).json());
    expect(empty).toEqual({ items: [], nextAfter: head, head });
    expect(await metric("fleet_manager_feed_head_position")).toBe(Number(head));
    expect(await metric("fleet_manager_feed_oldest_position")).toBe(Number(head) + 1);
    expect(await metric("fleet_manager_feed_events_purged_total")).toBeGreaterThan(0);

    await createSite("ret-after");
    const next = FeedPageSchema.parse((await read(head)).json());
    expect(next.items.map((e) => e.position)).toEqual([String(BigInt(head) + 1n)]);
    expect((await read("0")).statusCode).toBe(410);
  });
});
