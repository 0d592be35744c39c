import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { HubClient } from "@fm/clients";
import { startOAuthTestHub, TEST_ADMIN_SECRET } from "@fm/hub/testing";
import { TokenSource } from "./token.ts";

let hub: Awaited<ReturnType<typeof startOAuthTestHub>>;
beforeAll(async () => {
  hub = await startOAuthTestHub();
});
afterAll(() => hub.close());

const issued = () =>
  hub.app.inject({ method: "GET", url: "/metrics" }).then((r) =>
    r.body
      .split("\n")
      .filter((l) => l.startsWith('http_requests_total{method="POST",route="/oauth/token"'))
      .map((l) => Number(l.split(" ").at(-1)))
      .reduce((a, b) => a + b, 0),
  );

describe("TokenSource against the hub's authorization server", () => {
  it("discovers the token endpoint, caches the token, and refreshes it at 80 % of its lifetime", async () => {
    let clock = Date.now();
    const tokens = new TokenSource({
      issuer: hub.url,
      clientId: "fleet-admin",
      clientSecret: TEST_ADMIN_SECRET,
      scope: "fleet.read",
      now: () => clock,
    });
    const before = await issued();
    const [a, b] = await Promise.all([tokens.get(), tokens.get()]);
    expect(a).toBe(b);
    expect(await tokens.get()).toBe(a);
    expect(await issued()).toBe(before + 1); // one grant for three callers
    expect(decodeJwt(a)).toMatchObject({ client_id: "fleet-admin", scope: "fleet.read" });
    clock += 0.79 * 600_000;
    expect(await tokens.get()).toBe(a);
    clock += 0.02 * 600_000;
    const c = await tokens.get();
    expect(c).not.toBe(a);
    expect(await issued()).toBe(before + 2);
  });

  it("a hub 401 drops the cached token and the request succeeds with a fresh one", async () => {
    const tokens = new TokenSource({
      issuer: hub.url,
      clientId: "fleet-admin",
      clientSecret: TEST_ADMIN_SECRET,
      scope: "fleet.read",
    });
    let first = true;
    const client = new HubClient({
      baseUrl: hub.url,
      // The first token handed out is garbage, as a token signed with a since-rotated key would be.
      token: async () => (first ? ((first = false), "not-a-jwt") : tokens.get()),
      onUnauthorized: () => tokens.invalidate(),
    });
    expect((await client.listSites()).items).toEqual([]);
  });

  it("a wrong secret fails with the authorization server's error, naming no secret", async () => {
    const tokens = new TokenSource({ issuer: hub.url, clientId: "fleet-admin", clientSecret: "wrong-secret-value" });
    const err = await tokens.get().catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).not.toContain("wrong-secret-value");
    expect(JSON.stringify(err)).not.toContain("wrong-secret-value");
  });
});
