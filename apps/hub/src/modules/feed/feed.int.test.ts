import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FeedPage, SiteRecord } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { recordChange } from "../../changes/recorder.ts";
import type { Principal } from "../../lib/context.ts";

let hub: TestHub;
let url: string;
beforeAll(async () => {
  hub = await startTestHub();
  url = await hub.app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(() => hub.close());

const read = async (after: string, opts: { limit?: number; wait?: number } = {}): Promise<FeedPage> => {
  const res = await fetch(
    `${url}/api/v1/feeds/inventory/?after=${after}&limit=${opts.limit ?? 1000}&wait=${opts.wait ?? 0}`,
  );
  expect(res.status).toBe(200);
  return (await res.json()) as FeedPage;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const writer: Principal = { id: "feed-test", kind: "local", scopes: new Set() };
/** Event data as the feed's schema for site events requires it. */
const siteData: SiteRecord = {
  id: "0190a5b4-1234-7abc-8def-0123456789ab",
  slug: "feed-writer",
  name: "Feed writer",
  region: null,
  netboxSiteId: null,
  netboxClusterId: null,
  slurmEnabled: false,
  openstackSlurmEnabled: false,
  configureDhcp: true,
  platformClassActivityReady: false,
  impairmentHold: null,
  version: 1,
  createdAt: "2025-06-01T12:00:00.000Z",
  updatedAt: "2025-06-01T12:00:00.000Z",
};

describe("inventory change feed", () => {
  it("is ordered and resumable from any position", async () => {
    const slugs = ["feed-a", "feed-b", "feed-c", "feed-d", "feed-e"];
    for (const slug of slugs) {
      await fetch(`${url}/api/v1/sites`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ slug, name: slug }),
      });
    }
    const all = await read("0");
    const mine = all.items.filter((e) => e.type === "site.created");
    expect(mine.map((e) => (e.data as { slug: string }).slug)).toEqual(slugs);
    expect(all.items.every((e, i) => i === 0 || BigInt(e.position) > BigInt(all.items[i - 1]!.position))).toBe(true);
    const positions = all.items.map((e) => e.position);
    const head = all.nextAfter;
    expect(all.head).toBe(head);
    expect(head).toBe(positions.at(-1));

    // From the start, the first, a middle and the last position, and the head: the feed continues
    // with exactly the events after that position (none repeated, none skipped), whole or in
    // pages of 2, each page's nextAfter its last event (or the head once there is no more).
    const mid = Math.floor(positions.length / 2);
    const starts: Array<[string, number]> = [
      ["0", 0],
      [positions[0]!, 1],
      [positions[mid]!, mid + 1],
      [positions.at(-1)!, positions.length],
      [head, positions.length],
    ];
    for (const [after, from] of starts) {
      const whole = await read(after);
      expect(whole.items, `all after ${after}`).toEqual(all.items.slice(from));
      expect(whole.nextAfter, `all after ${after}`).toBe(head);
      const page = await read(after, { limit: 2 });
      const expected = positions.slice(from, from + 2);
      expect(
        page.items.map((e) => e.position),
        `2 after ${after}`,
      ).toEqual(expected);
      expect(page.nextAfter, `2 after ${after}`).toBe(expected.length === 2 ? expected[1] : head);
      expect(page.head).toBe(head);
    }

    // Following nextAfter from any of them, page by page, reads the rest of the feed exactly once.
    for (const [after, from] of starts) {
      const seen: string[] = [];
      let cursor = after;
      for (let i = 0; i <= positions.length; i++) {
        const page = await read(cursor, { limit: 2 });
        seen.push(...page.items.map((e) => e.position));
        if (page.nextAfter === cursor) break;
        cursor = page.nextAfter;
      }
      expect(seen, `paging on from ${after}`).toEqual(positions.slice(from));
      expect(cursor).toBe(head);
    }
    const end = await read(all.nextAfter);
    expect(end).toEqual({ items: [], nextAfter: all.nextAfter, head: all.nextAfter });
  });

  it("long-polls: a waiting reader is woken by the commit's notification, not by its periodic re-check", async () => {
    // A hub of its own: the test watches its database and its timers.
    const own = await startTestHub();
    const ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
    const realSetTimeout = globalThis.setTimeout;
    const reader = new AbortController();
    try {
      const feedUrl = (after: string) => `${ownUrl}/api/v1/feeds/inventory/?after=${after}&wait=60`;
      const start = ((await (await fetch(feedUrl("0").replace("wait=60", "wait=0"))).json()) as FeedPage).nextAfter;
      // A marker event inserted without the commit notification (its trigger skipped): only a
      // reader's own sequencer run gives it a position, which shows that reader has looked.
      const [marker] = await own.db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL session_replication_role = replica`;
        return tx.$queryRaw<{ seq: bigint }[]>`
          INSERT INTO inventory_events (type, resource_type, resource_id, data)
          VALUES ('site.updated', 'site', 'feed-marker', '{}') RETURNING seq`;
      });
      // From here the hub's timers never fire: its periodic re-check cannot wake the reader.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      // The reader asks for events after the marker's position, so the marker is not its answer.
      const waiting = fetch(feedUrl(String(BigInt(start) + 1n)), { signal: reader.signal }).then(
        async (r) => (await r.json()) as FeedPage,
      );
      for (;;) {
        const [row] = await own.db.prisma.$queryRaw<{ position: bigint | null }[]>`
          SELECT position FROM inventory_events WHERE seq = ${marker!.seq}`;
        if (row?.position != null) break;
        await new Promise((r) => realSetTimeout(r, 20));
      }
      // The reader has run its first check and found nothing: now an event commits. Only its
      // notification can wake the reader.
      const created = await fetch(`${ownUrl}/api/v1/sites`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ slug: "feed-late", name: "late" }),
      });
      expect(created.status).toBe(201);
      // A reader not woken by then never will be (its re-check cannot fire): give up in time
      // for the clean-up below to put the timers back.
      const page = await Promise.race([
        waiting,
        new Promise<never>((_, reject) =>
          realSetTimeout(
            () => reject(new Error("the waiting reader was not woken by the commit's notification")),
            20_000,
          ),
        ),
      ]);
      expect(page.items.map((e) => [e.type, (e.data as { slug?: string }).slug])).toEqual([
        ["site.created", "feed-late"],
      ]);
    } finally {
      reader.abort();
      vi.useRealTimers();
      await own.close();
    }
  });

  it("8 concurrent writers committing out of order: a reader gets every event exactly once, in order", async () => {
    const { nextAfter: start } = await read("0");
    const WRITERS = 8;
    const PER_WRITER = 25;
    const expected = new Set<string>();
    // Each writer's transaction appends its event, then holds the transaction open for a
    // random time before committing, so commits land out of insertion order.
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < PER_WRITER; i++) {
        const id = `w${w}-e${i}`;
        expected.add(id);
        await hub.db.prisma.$transaction(async (tx) => {
          await recordChange(
            tx,
            { principal: writer, requestId: id },
            {
              resourceType: "site",
              resourceId: id,
              siteId: null,
              verb: "updated",
              before: { ...siteData, version: i },
              after: { ...siteData, version: i + 1 },
            },
          );
          await sleep(Math.random() * 15);
        });
      }
    });
    let done = false;
    let doneAt = 0;
    const received: { id: string; position: bigint }[] = [];
    const reader = (async () => {
      let after = start;
      while (!done || received.length < expected.size) {
        const page = await read(after, { limit: 17, wait: 1 });
        for (const e of page.items) received.push({ id: e.resourceId, position: BigInt(e.position) });
        after = page.nextAfter;
        if (done && page.items.length === 0 && received.length >= expected.size) break;
        if (done && Date.now() - doneAt > 5000) break; // missed events never arrive: stop and let the assertions say so
      }
    })();
    await Promise.all(writers);
    done = true;
    doneAt = Date.now();
    await reader;

    const ids = received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length); // exactly once
    expect(new Set(ids)).toEqual(expected); // none skipped
    for (let i = 1; i < received.length; i++) expect(received[i]!.position).toBe(received[i - 1]!.position + 1n); // in order, no holes

    // The hazard was real: some events committed in another order than they were inserted,
    // which is exactly what would make a reader paging by insertion number skip them.
    const rows = await hub.db.prisma.inventoryEvent.findMany({
      where: { requestId: { in: [...expected] } },
      orderBy: { position: "asc" },
      select: { seq: true },
    });
    const inversions = rows.filter((r, i) => i > 0 && r.seq < rows[i - 1]!.seq).length;
    expect(inversions).toBeGreaterThan(0);
  });

  it("a site filter keeps naming a deleted site: its events up to its deletion, then quiet; a slug never used is 404", async () => {
    const create = async (slug: string) => {
      const res = await fetch(`${url}/api/v1/sites/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ slug, name: slug }),
      });
      expect(res.status).toBe(201);
      return { id: ((await res.json()) as { id: string }).id, etag: res.headers.get("etag")! };
    };
    const { id: gone } = await create("del-a");
    const { id: kept, etag } = await create("del-b");
    const cursor = (await read("0")).nextAfter;
    expect((await fetch(`${url}/api/v1/sites/${gone}`, { method: "DELETE" })).status).toBe(204);
    const patched = await fetch(`${url}/api/v1/sites/${kept}`, {
      method: "PATCH",
      headers: { "content-type": "application/json", "if-match": etag },
      body: JSON.stringify({ name: "del-b renamed" }),
    });
    expect(patched.status).toBe(200);

    const filtered = await fetch(`${url}/api/v1/feeds/inventory?after=${cursor}&site=del-a&site=del-b`);
    expect(filtered.status).toBe(200);
    const page = (await filtered.json()) as FeedPage;
    expect(page.items.map((e) => [e.type, e.resourceId])).toEqual([
      ["site.deleted", gone],
      ["site.updated", kept],
    ]);
    // Past the deletion the slug is still known: quiet, not an error.
    const after = await fetch(`${url}/api/v1/feeds/inventory?after=${page.nextAfter}&site=del-a`);
    expect(after.status).toBe(200);
    expect(((await after.json()) as FeedPage).items).toEqual([]);
    const never = await fetch(`${url}/api/v1/feeds/inventory?after=0&site=never-was`);
    expect(never.status).toBe(404);
    expect(await never.json()).toMatchObject({ code: "site_not_found", detail: "No site with slug 'never-was'" });
  });

  it("a cursor beyond the head was never given by this feed: 410, resnapshot", async () => {
    const { head } = await read("0");
    const res = await fetch(`${url}/api/v1/feeds/inventory?after=${BigInt(head) + 1000n}`);
    expect(res.status).toBe(410);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await res.json()).toMatchObject({
      code: "feed_cursor_expired",
      detail: expect.stringContaining(`is beyond this feed's head (${head})`),
    });
  });

  it("after=latest reads from the head as it is now: nothing old, and its nextAfter leads to what comes next", async () => {
    const { head } = await read("0");
    const latest = await fetch(`${url}/api/v1/feeds/inventory?after=latest`);
    expect(latest.status).toBe(200);
    expect(await latest.json()).toEqual({ items: [], nextAfter: head, head });
    const created = await fetch(`${url}/api/v1/sites/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ slug: "after-latest", name: "after-latest" }),
    });
    expect(created.status).toBe(201);
    const next = await read(head);
    expect(next.items.map((e) => [e.type, (e.data as { slug: string }).slug])).toEqual([
      ["site.created", "after-latest"],
    ]);
  });

  it("rejects a malformed position or wait", async () => {
    for (const qs of ["after=-1", "after=abc", "wait=61", "limit=0"]) {
      const res = await fetch(`${url}/api/v1/feeds/inventory?${qs}`);
      expect(res.status, qs).toBe(400);
    }
  });
});

describe("inventory change feed at shutdown", () => {
  it("a long-polling reader is answered with what there is when the hub closes, and the close completes", async () => {
    const own = await startTestHub();
    const ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
    const { nextAfter } = (await (
      await fetch(`${ownUrl}/api/v1/feeds/inventory/?after=0&limit=1000`)
    ).json()) as FeedPage;
    // Longer than the test's own timeout: only the close can end this wait in time.
    const pending = fetch(`${ownUrl}/api/v1/feeds/inventory/?after=${nextAfter}&wait=60`);
    await vi.waitFor(() =>
      expect(
        own.logs.some(
          (l) => l.msg === "incoming request" && String(l.req && (l.req as { url?: string }).url).includes("wait=60"),
        ),
      ).toBe(true),
    );
    await own.close();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(((await res.json()) as FeedPage).items).toEqual([]);
  });
});
