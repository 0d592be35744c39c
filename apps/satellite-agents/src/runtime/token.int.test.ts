import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt, decodeProtectedHeader } from "jose";
import * as oidc from "openid-client";
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
    const client = new HubClient({
      baseUrl: hub.url,
      token: () => tokens.get(),
      onUnauthorized: () => tokens.invalidate(),
    });
    expect((await client.listSites()).items).toEqual([]);
    const cached = await tokens.get();
    // The hub loses the key that signed the cached token (its keys replaced, as after a restore
    // or a lost key store): that token is now refused, while a fresh grant is signed with the
    // new key.
    await hub.db.prisma.signingKey.deleteMany();
    const rotated = await hub.app.inject({
      method: "POST",
      url: "/api/v1/admin/signing-keys/rotate",
      headers: { authorization: `Bearer ${hub.adminToken}` },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const refused = await hub.app.inject({ url: "/api/v1/sites/", headers: { authorization: `Bearer ${cached}` } });
    expect(refused.statusCode).toBe(401);

    const grants = await issued();
    expect((await client.listSites()).items).toEqual([]);
    expect(await issued()).toBe(grants + 1); // the cached token was dropped and replaced once
    const fresh = await tokens.get();
    expect(fresh).not.toBe(cached);
    expect(decodeProtectedHeader(fresh).kid).toBe(rotated.json<{ kid: string }>().kid);
  });

  it("a wrong secret fails with the authorization server's invalid_client error, naming no secret", async () => {
    const tokens = new TokenSource({ issuer: hub.url, clientId: "fleet-admin", clientSecret: "wrong-secret-value" });
    const err = await tokens.get().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    // RFC 6749 5.2: a failed client authentication is a 401 with error "invalid_client". With a
    // WWW-Authenticate challenge (HTTP Basic) openid-client hands over the unread response.
    const body =
      err instanceof oidc.WWWAuthenticateChallengeError
        ? ((await err.response.json()) as Record<string, unknown>)
        : err instanceof oidc.ResponseBodyError
          ? err.cause
          : undefined;
    expect({ status: (err as { status?: number }).status, error: body?.error }).toEqual({
      status: 401,
      error: "invalid_client",
    });
    expect(String((err as Error).message)).not.toContain("wrong-secret-value");
    expect(JSON.stringify(err)).not.toContain("wrong-secret-value");
  });
});
