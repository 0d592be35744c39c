/**
 * The feed is a contract: its pages keep the bytes and order they had when the hub read each
 * event through Prisma and wrote the page with JSON.stringify. `before` below is that reading,
 * as it was; the hub now has PostgreSQL write the page's text (repo.ts readPageJson).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InventoryEvent } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import type { PrismaClient } from "../../db/client.ts";
import { outbox, type NewInventoryEvent } from "../../changes/outbox.ts";
import { feedRepo } from "./repo.ts";
import { ANALYZE_AFTER_POSITIONED } from "./sequencer.ts";

let hub: TestHub;
let url: string;
beforeAll(async () => {
  hub = await startTestHub();
  url = await hub.app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(() => hub.close());

/** The page as the hub wrote it before: Prisma's rows, toInventoryEvent, JSON.stringify. */
async function before(prisma: PrismaClient, after: bigint, limit: number, siteIds?: string[]): Promise<string> {
  await feedRepo.sequence(prisma);
  const head = await feedRepo.head(prisma);
  const rows = await prisma.inventoryEvent.findMany({
    where: {
      position: { gt: after, lte: head },
      ...(siteIds ? { OR: [{ siteId: { in: siteIds } }, { siteId: null }] } : {}),
    },
    orderBy: { position: "asc" },
    take: limit,
  });
  const items = rows.map(
    (e) =>
      ({
        position: e.position!.toString(),
        type: e.type,
        resourceType: e.resourceType,
        resourceId: e.resourceId,
        siteId: e.siteId,
        data: e.data,
        requestId: e.requestId,
        occurredAt: e.occurredAt.toISOString(),
      }) as InventoryEvent,
  );
  const nextAfter = rows.length === limit ? rows[rows.length - 1]!.position! : head > after ? head : after;
  return JSON.stringify({ items, nextAfter: nextAfter.toString(), head: head.toString() });
}

const SITE_A = "0190a5b4-0000-7abc-8def-00000000000a";
const SITE_B = "0190a5b4-0000-7abc-8def-00000000000b";
/** Text that JSON escapes, or could be thought to: quotes, backslashes, controls, separators, astral. */
const AWKWARD = [
  'quote " and backslash \\ and slash / </script>',
  "tab\tnewline\ncarriage\rbackspace\bformfeed\f",
  "controls \u0001\u001f delete \u007f c1 \u0085\u009f",
  "line separator \u2028 paragraph \u2029",
  "émoji 🛰️ 中文 Ünïcödé \ud83d\ude00",
  "",
];
const event = (i: number): NewInventoryEvent =>
  ({
    type: "site.updated",
    resourceType: "site",
    resourceId: `page-json-${i}`,
    siteId: [SITE_A, SITE_B, null][i % 3]!,
    requestId: i % 4 === 0 ? null : `req-${AWKWARD[i % AWKWARD.length]!}`,
    data: {
      text: AWKWARD[i % AWKWARD.length]!,
      numbers: [0, -1, 12.5, 1e-7, 2 ** 53, 1e21, -0.000123],
      nested: { empty: {}, list: [], nothing: null, yes: true, no: false, deep: [[{ k: AWKWARD[(i + 1) % 6]! }]] },
      [AWKWARD[i % AWKWARD.length]! || "key"]: i,
    },
  }) as unknown as NewInventoryEvent;

describe("feed pages as PostgreSQL writes them", () => {
  it("keep the bytes, order and headers the hub wrote with JSON.stringify, for any cursor, limit and site filter", async () => {
    const prisma = hub.db.prisma;
    await prisma.$executeRaw`INSERT INTO sites (id, slug, name) VALUES (${SITE_A}::uuid, 'page-a', 'A'), (${SITE_B}::uuid, 'page-b', 'B')`;
    // Both of the append's paths: a JSON document (fewer than 200 rows) and COPY (more).
    await prisma.$transaction((tx) =>
      outbox.appendEvents(
        tx,
        Array.from({ length: 30 }, (_, i) => event(i)),
      ),
    );
    await prisma.$transaction((tx) =>
      outbox.appendEvents(
        tx,
        Array.from({ length: 400 }, (_, i) => event(30 + i)),
      ),
    );
    // And events written by the API itself.
    for (const slug of ["page-c", "page-d"]) {
      const res = await fetch(`${url}/api/v1/sites`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": `create-${slug}` },
        body: JSON.stringify({ slug, name: `Site "${slug}" \\ é` }),
      });
      expect(res.status).toBe(201);
    }
    const head = await feedRepo.head(prisma);
    expect(head).toBeGreaterThan(430n);
    let compared = 0;
    for (const [after, limit, site] of [
      [0n, 1000, undefined],
      [0n, 1, undefined],
      [0n, 7, "page-a"],
      [5n, 100, "page-b"],
      [head - 3n, 1000, undefined],
      [head, 10, undefined],
      [head, 10, "page-a"],
      [17n, 250, undefined],
    ] as const) {
      const siteIds = site ? [site === "page-a" ? SITE_A : SITE_B] : undefined;
      const query = `after=${after}&limit=${limit}${site ? `&site=${site}` : ""}`;
      const res = await fetch(`${url}/api/v1/feeds/inventory?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.headers.get("content-type"), query).toBe("application/json; charset=utf-8");
      const text = await res.text();
      expect(text, query).toBe(await before(prisma, after, limit, siteIds));
      expect(Number(res.headers.get("content-length")), query).toBe(Buffer.byteLength(text));
      compared += (JSON.parse(text) as { items: unknown[] }).items.length;
    }
    // The comparisons above were of pages with events in them, not of empty pages.
    expect(compared).toBeGreaterThan(750);
  });

  it("a cursor beyond the head or below the purge is still 410, read in the page's own snapshot", async () => {
    const head = await feedRepo.head(hub.db.prisma);
    const ahead = await fetch(`${url}/api/v1/feeds/inventory?after=${head + 1000n}`);
    expect(ahead.status).toBe(410);
    expect(((await ahead.json()) as { code: string }).code).toBe("feed_cursor_expired");
    // As retention leaves it after purging positions 1 to 5.
    await hub.db.prisma.$executeRaw`UPDATE inventory_feed_state SET purged_through = 5 WHERE id = 1`;
    try {
      const below = await fetch(`${url}/api/v1/feeds/inventory?after=4`);
      expect(below.status).toBe(410);
      expect(((await below.json()) as { detail: string }).detail).toMatch(/events up to 5 were purged/);
      expect((await fetch(`${url}/api/v1/feeds/inventory?after=5`)).status).toBe(200);
    } finally {
      await hub.db.prisma.$executeRaw`UPDATE inventory_feed_state SET purged_through = 0 WHERE id = 1`;
    }
  });

  it("after positioning a bulk write whose statistics were taken unpositioned, the sequencer's searches use the partial index again", async () => {
    // Its own database: the test takes the event table's statistics.
    const own = await startTestHub();
    const ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const prisma = own.db.prisma;
      // A bulk write the hub is not told of (its trigger skipped, as a restore's COPY would be):
      // its events stay unpositioned while the statistics are taken, as a first load's or the
      // demo seed's can be.
      const n = ANALYZE_AFTER_POSITIONED * 20;
      await prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL session_replication_role = replica`;
        await tx.$executeRawUnsafe(
          `INSERT INTO inventory_events (type, resource_type, resource_id, data)
           SELECT 'site.updated', 'site', 'bulk-' || g, '{"n":1}' FROM generate_series(1, ${n}) g`,
        );
      });
      await prisma.$executeRawUnsafe("ANALYZE inventory_events");
      const plan = async () =>
        JSON.stringify(
          await prisma.$queryRawUnsafe(
            "EXPLAIN (FORMAT JSON) SELECT EXISTS (SELECT 1 FROM inventory_events WHERE position IS NULL)",
          ),
        );
      // The stale case this guards against: planned as a scan of every event.
      expect(await plan()).toContain('"Seq Scan"');
      // A reader comes: its page says events wait, the sequencer positions them all.
      const res = await fetch(`${ownUrl}/api/v1/feeds/inventory?after=0&limit=1`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { head: string }).head).toBe(String(n));
      const unpositioned = await prisma.$queryRaw<{ left: bigint }[]>`
        SELECT count(*) AS left FROM inventory_events WHERE position IS NULL`;
      expect(unpositioned[0]?.left).toBe(0n);
      const after = await plan();
      expect(after).not.toContain('"Seq Scan"');
      expect(after).toContain("inventory_events_unpositioned_idx");
      expect(
        own.logs.some((l) => l.msg === "feed statistics refreshed after a large batch" && l.positioned === n),
      ).toBe(true);
    } finally {
      await own.close();
    }
  });
});
