import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxiedTestHub } from "@fm/hub/testing";
import { HubApiError, HubClient } from "./hub-client.ts";

let hub: Awaited<ReturnType<typeof startProxiedTestHub>>;
let client: HubClient;
beforeAll(async () => {
  hub = await startProxiedTestHub({ readinessTimeoutMs: 300 });
  const address = await hub.app.listen({ port: 0, host: "127.0.0.1" });
  client = new HubClient({ baseUrl: address, backoffMs: 100, maxAttempts: 6 });
});
afterAll(() => hub.close());

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

  it("surfaces problem+json as HubApiError and does not retry a 4xx", async () => {
    const err = await client.createSite({ slug: "client-b", name: "again" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubApiError);
    expect(err).toMatchObject({ status: 409, code: "site_slug_taken" });
    expect((err as Error).message).toContain("site_slug_taken");
  });

  it("retries a read through a database outage and succeeds once it is back", async () => {
    await hub.proxy.cut();
    setTimeout(() => void hub.proxy.restore(), 400);
    const page = await client.listSites({ q: "client-" });
    expect(page.items.map((s) => s.slug)).toEqual(["client-b"]);
  });
});
