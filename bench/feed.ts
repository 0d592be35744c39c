/**
 * `npm run bench -- feed`: catching up on the inventory feed. The demo seed writes
 * `BENCH_FEED_DEVICES_PER_SITE` × 2 devices (100,000 × 2: 200,006 events) with the hub stopped,
 * and the event table's statistics are taken while those events have no position yet (as
 * autovacuum takes them after a first load, the demo seed or a restore). Then a hub process
 * starts and readers read `BENCH_FEED_READ` (100,000) events from position 0, pages of
 * `BENCH_FEED_PAGE` (1,000):
 *
 *  - first: the first page after the bulk write finds its events unpositioned: the hub positions
 *    all of them, then refreshes the statistics (see feed/sequencer.ts), timed on its own; then
 *    the first catch-up, on the plans those statistics give;
 *  - hub raw: fetch + JSON.parse of each page;
 *  - hub client: the hub client's readFeed, each event validated by the domain schemas, as the
 *    Matrix connector reads;
 *  - bare SQL: the baseline, pg reading the same columns (the JSON `data` parsed) by position.
 *
 * Rounds (`BENCH_ROUNDS`) alternate the three; each reports events per second and its ratio to
 * the bare read of the same round (the median ratio over rounds). Every side must read the same
 * events in the same order (a digest of positions, types and resource ids; checked).
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { HubClient } from "@fm/clients";
import type { FeedPage } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { seedDemo } from "../apps/hub/src/seed/demo.ts";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";
import { ROUNDS, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
type Event = { position: string; type: string; resourceId: string };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Reads `total` events from position 0 with `page(after)`; the digest of what it read and seconds. */
async function catchUp(total: number, page: (after: string) => Promise<{ items: Event[]; nextAfter: string }>) {
  const digest = createHash("sha256");
  let after = "0";
  let read = 0;
  const t0 = performance.now();
  while (read < total) {
    const p = await page(after);
    if (!p.items.length) throw new Error(`the feed ended after ${read} of ${total} events`);
    for (const e of p.items.slice(0, total - read)) digest.update(`${e.position} ${e.type} ${e.resourceId}\n`);
    read += p.items.length;
    after = p.nextAfter;
  }
  return { s: (performance.now() - t0) / 1000, digest: digest.digest("hex") };
}

export async function feedCatchUp(report: Report): Promise<void> {
  const perSite = knob("BENCH_FEED_DEVICES_PER_SITE", 100_000, 500);
  const total = knob("BENCH_FEED_READ", 100_000, 600);
  const limit = knob("BENCH_FEED_PAGE", 1000, 100);
  const db = await createTestDatabase();
  const bare = new pg.Pool({ connectionString: db.url, max: 1 });
  try {
    await migrate(db.url);
    const data = createDatabase(db.url, { poolMax: 4 });
    await seedDemo(data.prisma, { devicesPerSite: perSite });
    // The statistics a first load leaves: taken while its events wait for their positions.
    await data.prisma.$executeRawUnsafe("ANALYZE inventory_events");
    const [counts] = await data.prisma.$queryRaw<{ events: bigint; unpositioned: bigint }[]>`
      SELECT count(*) AS events, count(*) FILTER (WHERE position IS NULL) AS unpositioned FROM inventory_events`;
    await data.close();
    const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
    try {
      const token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET, "fleet.read");
      const client = new HubClient({ baseUrl: hub.url, token: async () => token, timeoutMs: 120_000 });
      const raw = async (after: string) => {
        const res = await fetch(`${hub.url}/api/v1/feeds/inventory?after=${after}&limit=${limit}`, {
          headers: bearer(token),
        });
        if (!res.ok) throw new Error(`GET feed: ${res.status} ${await res.text()}`);
        return JSON.parse(await res.text()) as FeedPage;
      };
      const sides = {
        "hub raw (fetch + JSON.parse)": raw,
        "hub client readFeed (validated)": (after: string) => client.readFeed({ after, limit }),
        "bare SQL (pg, same columns, data parsed)": async (after: string) => {
          const { rows } = await bare.query<Event & { siteId: string | null; data: unknown; occurredAt: Date }>(
            `SELECT position::text AS position, type, resource_type AS "resourceType", resource_id AS "resourceId",
                    site_id AS "siteId", data, request_id AS "requestId", occurred_at AS "occurredAt"
               FROM inventory_events e WHERE e.position > $1 ORDER BY e.position LIMIT $2`,
            [after, limit],
          );
          return { items: rows, nextAfter: rows.at(-1)?.position ?? after };
        },
      };
      // The first page positions the bulk write (and refreshes the statistics): timed on its own,
      // a cost paid once, by the first reader only when the hub was not told of the commit.
      const t = performance.now();
      await raw("0");
      const positionedS = (performance.now() - t) / 1000;
      const first = await catchUp(total, raw);
      const digests = new Set([first.digest]);
      const seconds: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
      const ratios: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
      let firstRatio = NaN;
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which side goes first, so neither always reads a warmer cache.
        const order = Object.entries(sides);
        if (round % 2) order.reverse();
        const s: Record<string, number> = {};
        for (const [name, page] of order) {
          const r = await catchUp(total, page);
          digests.add(r.digest);
          s[name] = r.s;
          seconds[name]!.push(r.s);
        }
        const bareS = s["bare SQL (pg, same columns, data parsed)"]!;
        for (const name of Object.keys(sides)) ratios[name]!.push(bareS / s[name]!);
        if (round === 0) firstRatio = bareS / first.s;
      }
      if (digests.size !== 1) throw new Error(`the readers read different events (${digests.size} digests)`);
      const note = `${counts!.events} events, ${counts!.unpositioned} unpositioned at the start; pages of ${limit}`;
      report(
        `feed: the first page after the bulk write (positions ${counts!.unpositioned} events)`,
        `${positionedS.toFixed(2)} s`,
        note,
      );
      report(
        `feed: first catch-up of ${total} events after the bulk write`,
        `${Math.round(total / first.s)}/s`,
        `${firstRatio.toFixed(2)}x bare (the statistics as the sequencer left them)`,
      );
      for (const name of Object.keys(sides))
        report(
          `feed: catch-up of ${total} events, ${name}`,
          `${Math.round(total / median(seconds[name]!))}/s`,
          `${median(ratios[name]!).toFixed(2)}x bare (median of ${ROUNDS}: ${ratios[name]!.map((r) => r.toFixed(2)).join(", ")})`,
        );
      report("feed: every reader read the same events in the same order", "ok", "the same events (checked)");
    } finally {
      await hub.stop();
    }
  } finally {
    await bare.end();
    await db.drop();
  }
}
