/** HubClient against a real hub (local admin), through a front that counts what reached the hub. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxiedTestHub } from "@fm/hub/testing";
import { startHttpFront, type HttpFront } from "../testing/http-front.ts";
import { HubApiError, HubClient } from "./index.ts";

let hub: Awaited<ReturnType<typeof startProxiedTestHub>>;
let front: HttpFront;
let client: HubClient;
beforeAll(async () => {
  hub = await startProxiedTestHub({ readinessTimeoutMs: 300 });
  front = await startHttpFront(await hub.app.listen({ port: 0, host: "127.0.0.1" }), () => "forward");
  client = new HubClient({ baseUrl: front.url, backoffMs: 100, maxAttempts: 6 });
});
afterAll(async () => {
  await front?.close();
  await hub?.close();
});

/** What reached the hub from here on: "METHOD path -> status". */
function reached(): () => string[] {
  const from = front.seen.length;
  return () => front.seen.slice(from).map((r) => `${r.method} ${r.path} -> ${r.answer}`);
}

describe("HubClient against a real hub", () => {
  it("creates, reads, pages, updates with If-Match and deletes sites", async () => {
    const site = await client.createSite({ slug: "client-a", name: "A" });
    await client.createSite({ slug: "client-b", name: "B" });
    const { site: got, etag } = await client.getSite(site.id);
    expect(got).toEqual(site);
    const all = [];
    for await (const s of client.allSites({ q: "client-" })) all.push(s.slug);
    expect(all.sort()).toEqual(["client-a", "client-b"]);
    const updated = await client.updateSite(site.id, { name: "A2" }, etag!);
    expect(updated.version).toBe(2);
    await client.deleteSite(site.id);
    await expect(client.getSite(site.id)).rejects.toMatchObject({ status: 404, code: "site_not_found" });
  });

  it("reads a site's discrepancies page by page, and the fleet-wide summary", async () => {
    const site = await client.createSite({ slug: "client-disc", name: "D" });
    // Three devices NetBox last observed a day ago, and no other source since.
    await hub.db.prisma.device.createMany({
      data: [0, 1, 2].map((i) => ({ siteId: site.id, name: `client-disc-${i}` })),
    });
    await hub.db.prisma.deviceObservation.updateMany({
      where: { device: { siteId: site.id } },
      data: { netboxObservedAt: new Date(Date.now() - 86_400_000) },
    });
    const page = await client.listSiteDiscrepancies(site.id, { limit: 2 });
    expect(page).toMatchObject({ count: 3, nextCursor: expect.any(String) });
    const names = [];
    for await (const d of client.allSiteDiscrepancies(site.id, { kind: "unobserved" })) names.push(d.name);
    expect(names.sort()).toEqual(["client-disc-0", "client-disc-1", "client-disc-2"]);
    const summary = await client.discrepancySummary();
    expect(summary.sites).toContainEqual(
      expect.objectContaining({
        siteId: site.id,
        slug: "client-disc",
        total: 3,
        byKind: expect.objectContaining({ unobserved: 3 }),
      }),
    );
  });

  it("surfaces problem+json as HubApiError and sends a request the hub refused (4xx) only once", async () => {
    await client.createSite({ slug: "refused", name: "R" });
    const sent = reached();
    const err = await client.createSite({ slug: "refused", name: "again" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubApiError);
    expect(err).toMatchObject({ status: 409, code: "site_slug_taken" });
    expect((err as Error).message).toContain("site_slug_taken");
    // Also when the request could be repeated: a read, and a POST with an Idempotency-Key.
    await expect(client.getSite("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({ status: 404 });
    await expect(client.createSite({ slug: "refused", name: "again" }, "key-409")).rejects.toMatchObject({
      status: 409,
    });
    expect(sent()).toEqual([
      "POST /api/v1/sites/ -> 409",
      "GET /api/v1/sites/00000000-0000-4000-8000-000000000000/ -> 404",
      "POST /api/v1/sites/ -> 409",
    ]);
  });

  it("retries a read through a database outage, waiting what the hub's Retry-After asks", async () => {
    const delays: number[] = [];
    // The client's wait between attempts is where the outage ends: deterministic, no timer race.
    const waiting = new HubClient({
      baseUrl: front.url,
      backoffMs: 100,
      maxAttempts: 6,
      sleep: async (ms) => {
        if (delays.push(ms) === 1) await hub.proxy.restore();
      },
    });
    await client.createSite({ slug: "outage-a", name: "O" });
    await hub.proxy.cut();
    const sent = reached();
    const page = await waiting.listSites({ q: "outage-" });
    expect(page.items.map((s) => s.slug)).toEqual(["outage-a"]);
    expect(sent()).toEqual(["GET /api/v1/sites/?q=outage- -> 503", "GET /api/v1/sites/?q=outage- -> 200"]);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(5000); // the hub's Retry-After: 5 for an unreachable database
  });
});
