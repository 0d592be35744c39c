/**
 * The client's feed and snapshot reading against a real hub, and through a front that serves
 * what a cut connection or a broken proxy leaves of the hub's real snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHub, seedNetboxOnlyDevices, type TestHub } from "@fm/hub/testing";
import type { InventorySnapshotLine } from "@fm/domain";
import { startHttpFront, type FrontStep, type HttpFront } from "../testing/http-front.ts";
import { FeedCursorExpiredError, HubClient, SnapshotTruncatedError } from "./index.ts";

let hub: TestHub;
let hubUrl: string;
let client: HubClient;
let clock = new Date();
beforeAll(async () => {
  hub = await startTestHub({ feedRetention: { retentionMs: 60_000, intervalMs: 3600_000, now: () => clock } });
  hubUrl = await hub.app.listen({ port: 0, host: "127.0.0.1" });
  client = new HubClient({ baseUrl: hubUrl, backoffMs: 10 });
  await seedNetboxOnlyDevices(
    hub.db.prisma,
    { slug: "cf-a" },
    Array.from({ length: 30 }, (_, i) => ({ name: `cf-a-${i}`, role: "gpu-node" as const })),
  );
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "cf-b" }, [{ name: "cf-b-0", role: "cpu-node" }]);
});
afterAll(() => hub?.close());

async function collect(lines: AsyncIterable<InventorySnapshotLine>): Promise<InventorySnapshotLine[]> {
  const all: InventorySnapshotLine[] = [];
  for await (const l of lines) all.push(l);
  return all;
}

/** A client whose every request the front answers with `step`. */
async function behind(step: FrontStep): Promise<{ client: HubClient; front: HttpFront }> {
  const front = await startHttpFront(hubUrl, () => step);
  return { client: new HubClient({ baseUrl: front.url, maxAttempts: 1 }), front };
}

describe("HubClient feed and snapshot", () => {
  it("reads the snapshot line by line, filtered by site, then the feed from its position with its head", async () => {
    const lines = await collect(client.readSnapshot({ sites: ["cf-b"] }));
    expect(lines[0]).toMatchObject({ kind: "snapshot", sites: ["cf-b"] });
    expect(lines.filter((l) => l.kind === "device")).toHaveLength(1);
    expect(lines.at(-1)).toEqual({ kind: "end", count: lines.length - 2 });
    const position = (lines[0] as { position: string }).position;

    const site = await client.createSite({ slug: "cf-c", name: "C" });
    const page = await client.readFeed({ after: position, limit: 10 });
    expect(page.items.map((e) => [e.type, e.resourceId])).toEqual([["site.created", site.id]]);
    expect(page.head).toBe(page.nextAfter);
    // Filtered to another site, the event is skipped but the cursor still moves past it.
    const other = await client.readFeed({ after: position, site: ["cf-a"] });
    expect(other).toEqual({ items: [], nextAfter: page.nextAfter, head: page.head });
  });

  it("throws SnapshotTruncatedError when the stream ends without its end line or miscounts", async () => {
    const res = await fetch(`${hubUrl}/api/v1/feeds/inventory/snapshot`);
    const whole = await res.text();
    const lines = whole.trimEnd().split("\n");
    const cut = lines.slice(0, -1).join("\n") + "\n";
    const miscount = [...lines.slice(0, -2), lines.at(-1)].join("\n") + "\n";
    const ndjson = { "content-type": "application/x-ndjson" };
    for (const body of [cut, miscount, lines.slice(0, 3).join("\n").slice(0, -5)]) {
      const { client: c, front } = await behind({ status: 200, headers: ndjson, body });
      try {
        await expect(collect(c.readSnapshot())).rejects.toBeInstanceOf(SnapshotTruncatedError);
      } finally {
        await front.close();
      }
    }
    const { client: whole200, front } = await behind({ status: 200, headers: ndjson, body: whole });
    try {
      expect((await collect(whole200.readSnapshot())).length).toBe(lines.length);
    } finally {
      await front.close();
    }
  });

  it("throws FeedCursorExpiredError for a cursor older than retention", async () => {
    await client.createSite({ slug: "cf-d", name: "D" });
    clock = new Date(Date.now() + 3600_000);
    await hub.app.feedRetention.purgeOnce();
    const err = await client.readFeed({ after: "0" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FeedCursorExpiredError);
    expect(err).toMatchObject({ status: 410, code: "feed_cursor_expired" });
  });
});
