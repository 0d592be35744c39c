/**
 * Discovery, refresh and client credentials over real HTTP: refresh against the test OIDC
 * issuer, client credentials against the real hub's /oauth/token, and refusals and outages
 * through an HTTP front that answers in the server's place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { TEST_ADMIN_SECRET, startOAuthTestHub } from "@fm/hub/testing";
import { TEST_CLIENT_ID, startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { bearer } from "@fm/test-support/process";
import { freePort } from "@fm/test-support/ports";
import { startHttpFront } from "../testing/http-front.ts";
import {
  IssuerUnavailableError,
  OAuthError,
  clientCredentialsToken,
  discoverIssuer,
  loginWithDeviceCode,
  refreshToken,
  type IssuerMetadata,
} from "./index.ts";

let issuer: TestIssuer;
let metadata: IssuerMetadata;
let hub: Awaited<ReturnType<typeof startOAuthTestHub>>;
beforeAll(async () => {
  issuer = await startTestIssuer({ deviceIntervalS: 1 });
  issuer.setUser({ email: "cy@example.com", groups: ["fleet-operators"] });
  metadata = await discoverIssuer(issuer.issuer);
  hub = await startOAuthTestHub();
});
afterAll(async () => {
  await issuer.close();
  await hub.close();
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("not refused"),
    (e: unknown) => e,
  );

/** A person signed in through the device flow, approved at once. */
const signIn = (scopes = ["openid", "fleet.read", "fleet.operate"]) =>
  loginWithDeviceCode({
    metadata,
    clientId: TEST_CLIENT_ID,
    scopes,
    onPrompt: (p) => issuer.approveDevice(p.userCode),
  });

describe("discovery", () => {
  it("reads the endpoints of an OIDC issuer and of the hub", async () => {
    expect(metadata).toEqual({
      issuer: issuer.issuer,
      authorizationEndpoint: `${issuer.issuer}/authorize`,
      tokenEndpoint: `${issuer.issuer}/token`,
      deviceAuthorizationEndpoint: `${issuer.issuer}/device_authorization`,
    });
    expect(await discoverIssuer(`${hub.url}/`)).toEqual({ issuer: hub.url, tokenEndpoint: `${hub.url}/oauth/token` });
  });

  it("refuses a document about another issuer, and an issuer without one", async () => {
    const impostor = await startHttpFront(issuer.issuer, () => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ issuer: "https://elsewhere.example", token_endpoint: "https://elsewhere.example/t" }),
    }));
    try {
      expect(await refusal(discoverIssuer(impostor.url))).toMatchObject({
        error: "invalid_response",
        message: expect.stringContaining("https://elsewhere.example"),
      });
    } finally {
      await impostor.close();
    }
    expect(await refusal(discoverIssuer(`${issuer.issuer}/tenant-x`))).toMatchObject({
      error: "invalid_response",
      status: 404,
    });
  });
});

describe("refresh tokens", () => {
  it("rotate: each refresh returns a new one, and a spent one revokes the whole family", async () => {
    const first = await signIn();
    const second = await refreshToken({ metadata, clientId: TEST_CLIENT_ID, refreshToken: first.refreshToken! });
    expect(second.refreshToken).toBeTruthy();
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(decodeJwt(second.accessToken)).toMatchObject({ email: "cy@example.com" });

    const reuse = await refusal(
      refreshToken({ metadata, clientId: TEST_CLIENT_ID, refreshToken: first.refreshToken! }),
    );
    expect(reuse).toBeInstanceOf(OAuthError);
    expect(reuse).toMatchObject({ error: "invalid_grant", status: 400 });
    expect((reuse as Error).message).not.toContain(first.refreshToken!);
    // The reuse looked like a theft: the token that replaced it is revoked too.
    expect(
      await refusal(refreshToken({ metadata, clientId: TEST_CLIENT_ID, refreshToken: second.refreshToken! })),
    ).toMatchObject({ error: "invalid_grant", description: "refresh token revoked" });
  });

  it("may narrow the scope, never widen it", async () => {
    const tokens = await signIn();
    const narrowed = await refreshToken({
      metadata,
      clientId: TEST_CLIENT_ID,
      refreshToken: tokens.refreshToken!,
      scopes: ["openid", "fleet.read"],
    });
    expect(narrowed.scope).toEqual(["openid", "fleet.read"]);
    expect(decodeJwt(narrowed.accessToken).scope).toBe("openid fleet.read");
    expect(
      await refusal(
        refreshToken({
          metadata,
          clientId: TEST_CLIENT_ID,
          refreshToken: narrowed.refreshToken!,
          scopes: ["fleet.admin"],
        }),
      ),
    ).toMatchObject({ error: "invalid_scope" });
  });
});

describe("client credentials against the hub", () => {
  const tokenEndpoint = () => `${hub.url}/oauth/token`;
  const createSite = (token: string, slug: string) =>
    fetch(`${hub.url}/api/v1/sites/`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(token) },
      body: JSON.stringify({ slug, name: slug }),
    });

  it("gets a token with the client's scopes, or fewer when asked (--scope read-only)", async () => {
    const full = await clientCredentialsToken({
      tokenEndpoint: tokenEndpoint(),
      clientId: "fleet-admin",
      clientSecret: TEST_ADMIN_SECRET,
    });
    expect(full.scope?.sort()).toEqual(["fleet.admin", "fleet.operate", "fleet.read"]);
    expect(full.expiresAt).toBeGreaterThan(Date.now());
    expect((await createSite(full.accessToken, "cc-full")).status).toBe(201);

    const readOnly = await clientCredentialsToken({
      tokenEndpoint: tokenEndpoint(),
      clientId: "fleet-admin",
      clientSecret: TEST_ADMIN_SECRET,
      scopes: ["fleet.read"],
    });
    expect(readOnly.scope).toEqual(["fleet.read"]);
    expect((await fetch(`${hub.url}/api/v1/sites/`, { headers: bearer(readOnly.accessToken) })).status).toBe(200);
    const refused = await createSite(readOnly.accessToken, "cc-read-only");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("maps the hub's refusals to OAuthError, without the secret in the message", async () => {
    const wrong = await refusal(
      clientCredentialsToken({ tokenEndpoint: tokenEndpoint(), clientId: "fleet-admin", clientSecret: "not-it" }),
    );
    expect(wrong).toMatchObject({ name: "OAuthError", error: "invalid_client", status: 401 });
    expect((wrong as Error).message).not.toContain("not-it");
    const tooMuch = await refusal(
      clientCredentialsToken({
        tokenEndpoint: tokenEndpoint(),
        clientId: "fleet-admin",
        clientSecret: TEST_ADMIN_SECRET,
        scopes: ["agent:netbox"],
      }),
    );
    expect(tooMuch).toMatchObject({ error: "invalid_scope", status: 400 });
    expect((tooMuch as Error).message).not.toContain(TEST_ADMIN_SECRET);
  });

  it("tries again through an outage, and gives up in words when the answer is not OAuth", async () => {
    const flaky = await startHttpFront(hub.url, [503, "drop"]);
    const down = await startHttpFront(hub.url, () => ({ status: 502, body: "<h1>Bad gateway</h1>" }));
    try {
      const tokens = await clientCredentialsToken({
        tokenEndpoint: `${flaky.url}/oauth/token`,
        clientId: "fleet-admin",
        clientSecret: TEST_ADMIN_SECRET,
      });
      expect(tokens.accessToken).toBeTruthy();
      expect(flaky.seen.map((r) => r.answer)).toEqual([503, "dropped", 200]);
      // Basic credentials, form body (RFC 6749 2.3.1, 4.4.2).
      expect(flaky.seen[2]!.headers.authorization).toMatch(/^Basic /);
      expect(flaky.seen[2]!.body).toBe("grant_type=client_credentials");

      const err = await refusal(
        clientCredentialsToken({
          tokenEndpoint: `${down.url}/oauth/token`,
          clientId: "fleet-admin",
          clientSecret: TEST_ADMIN_SECRET,
        }),
      );
      expect(err).toMatchObject({ error: "invalid_response", status: 502 });
      expect(down.seen).toHaveLength(3);
    } finally {
      await flaky.close();
      await down.close();
    }
    const nobody = await refusal(
      clientCredentialsToken({
        tokenEndpoint: `http://127.0.0.1:${await freePort()}/oauth/token`,
        clientId: "fleet-admin",
        clientSecret: TEST_ADMIN_SECRET,
      }),
    );
    expect(nobody).toBeInstanceOf(IssuerUnavailableError);
    expect((nobody as Error).message).toMatch(/did not answer after 3 attempt\(s\): ECONNREFUSED/);
  });
});
