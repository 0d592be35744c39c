/**
 * What HubClient sends again, and what it does not, against a real hub with OAuth2 tokens,
 * through a front that counts (and, where a test says so, answers or cuts) every request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOAuthTestHub } from "@fm/hub/testing";
import { startHttpFront, type FrontStep, type HttpFront } from "../testing/http-front.ts";
import { HubApiError, HubClient, HubUnavailableError, type HubClientOptions } from "./index.ts";

let hub: Awaited<ReturnType<typeof startOAuthTestHub>>;
beforeAll(async () => {
  hub = await startOAuthTestHub();
});
afterAll(() => hub?.close());

const fronts: HttpFront[] = [];
afterAll(() => Promise.all(fronts.map((f) => f.close())));

/** A front to the hub answering as `script` says, and a client through it with the admin's token. */
async function through(script: FrontStep[], options: Partial<HubClientOptions> = {}) {
  const front = await startHttpFront(hub.url, script);
  fronts.push(front);
  const delays: number[] = [];
  const client = new HubClient({
    baseUrl: front.url,
    token: async () => hub.adminToken,
    backoffMs: 1,
    sleep: async (ms) => delays.push(ms),
    ...options,
  });
  const sent = () => front.seen.map((r) => `${r.method} ${r.path} -> ${r.answer}`);
  return { front, client, delays, sent };
}

/** The sites with this slug, as the hub has them (read directly, not through a front). */
const site = async (slug: string) =>
  (await new HubClient({ baseUrl: hub.url, token: async () => hub.adminToken }).listSites({ slug })).items;

describe("HubClient POSTs", () => {
  it("sends a POST with an Idempotency-Key again, with the same key, and the hub acts once", async () => {
    // The hub creates the site, then the answer is lost: only the key makes a second try safe.
    const { front, client, sent } = await through(["forward-then-drop"]);
    const created = await client.createSite({ slug: "retried-post", name: "R" }, "key-retried-post");
    expect(created.slug).toBe("retried-post");
    expect(sent()).toEqual(["POST /api/v1/sites/ -> dropped", "POST /api/v1/sites/ -> 201"]);
    expect(front.seen.map((r) => r.headers["idempotency-key"])).toEqual(["key-retried-post", "key-retried-post"]);
    expect(await site("retried-post")).toHaveLength(1);
  });

  it("sends a POST without an Idempotency-Key once, whatever happens to it", async () => {
    const unavailable = await through([503]);
    await expect(unavailable.client.createSite({ slug: "once-a", name: "A" })).rejects.toMatchObject({ status: 503 });
    expect(unavailable.sent()).toEqual(["POST /api/v1/sites/ -> 503"]);
    expect(await site("once-a")).toEqual([]);

    const lost = await through(["forward-then-drop"]);
    const err = await lost.client.createSite({ slug: "once-b", name: "B" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubUnavailableError);
    expect(err).toMatchObject({ attempts: 1 });
    expect(lost.sent()).toEqual(["POST /api/v1/sites/ -> dropped"]);
    expect(await site("once-b")).toHaveLength(1); // it did reach the hub: a second send would have failed
  });
});

describe("HubClient and a refused token", () => {
  it("on a 401 drops its token and sends the request once more with a fresh one, a POST too", async () => {
    // The first token of each request is one the hub refuses, as one signed with a rotated key would be.
    let stale = true;
    let dropped = 0;
    const { front, client, sent } = await through([], {
      token: async () => (stale ? "not-a-jwt" : hub.adminToken),
      onUnauthorized: () => {
        dropped++;
        stale = false;
      },
    });
    expect((await client.listSites({ slug: "after-401" })).items).toEqual([]);
    stale = true;
    await client.createSite({ slug: "after-401", name: "A" });
    expect(sent()).toEqual([
      "GET /api/v1/sites/?slug=after-401 -> 401",
      "GET /api/v1/sites/?slug=after-401 -> 200",
      "POST /api/v1/sites/ -> 401",
      "POST /api/v1/sites/ -> 201",
    ]);
    expect(front.seen.map((r) => r.headers.authorization)).toEqual([
      "Bearer not-a-jwt",
      `Bearer ${hub.adminToken}`,
      "Bearer not-a-jwt",
      `Bearer ${hub.adminToken}`,
    ]);
    expect(dropped).toBe(2);
    expect(await site("after-401")).toHaveLength(1);
  });

  it("takes a second 401, with the fresh token, as the answer", async () => {
    let dropped = 0;
    const { client, sent } = await through([], {
      token: async () => "not-a-jwt",
      onUnauthorized: () => {
        // A client that asked again would loop for ever: fail at the second call instead.
        if (++dropped > 1) throw new Error(`onUnauthorized called ${dropped} times for one request`);
      },
    });
    const err = await client.listSites().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubApiError);
    expect(err).toMatchObject({ status: 401 });
    expect(sent()).toEqual(["GET /api/v1/sites/ -> 401", "GET /api/v1/sites/ -> 401"]);
    expect(dropped).toBe(1);
  });
});

describe("HubClient and an overloaded hub", () => {
  it("waits what Retry-After asks on 429 and 503 before the next attempt: not less, and no longer than its own backoff", async () => {
    const { client, delays, sent } = await through([
      { status: 429, headers: { "retry-after": "2" } },
      { status: 503, headers: { "retry-after": "1" } },
    ]);
    expect((await client.listSites({ slug: "no-such-site" })).items).toEqual([]);
    expect(sent()).toEqual([
      "GET /api/v1/sites/?slug=no-such-site -> 429",
      "GET /api/v1/sites/?slug=no-such-site -> 503",
      "GET /api/v1/sites/?slug=no-such-site -> 200",
    ]);
    // The client's own backoff is 1 ms here: each wait is the hub's Retry-After, exactly.
    expect(delays).toEqual([2000, 1000]);
  });

  it("gives up after maxAttempts with the hub's last answer", async () => {
    const { client, sent } = await through([502, 502, 502], { maxAttempts: 3 });
    await expect(client.getSite("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({ status: 502 });
    expect(sent()).toHaveLength(3);
  });
});
