/**
 * A person's browser login against the test OIDC issuer over real HTTP. The test plays the
 * browser: it opens the authorization URL, follows the issuer's redirect to the loopback
 * server and reads the page it is shown.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { decodeJwt } from "jose";
import { startOAuthTestHub, testIdentity } from "@fm/hub/testing";
import { TEST_CLIENT_ID, startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { bearer } from "@fm/test-support/process";
import { OAuthError, discoverIssuer, loginWithAuthorizationCode, type IssuerMetadata } from "./index.ts";

let issuer: TestIssuer;
let metadata: IssuerMetadata;
beforeAll(async () => {
  issuer = await startTestIssuer();
  metadata = await discoverIssuer(issuer.issuer);
});
afterAll(() => issuer.close());
beforeEach(() => issuer.setUser({ email: "ana@example.com", groups: ["fleet-admins"] }));

interface Browsed {
  authorizeUrl: URL;
  callback: URL;
  page?: { status: number; text: string };
}

/** A browser that signs in at the issuer and lands on the loopback; `tamper` changes the redirect. */
function browser(seen: Partial<Browsed>, tamper: (callback: URL) => URL | Promise<URL> = (u) => u) {
  return async (url: string) => {
    seen.authorizeUrl = new URL(url);
    const atIssuer = await fetch(url, { redirect: "manual" });
    expect(atIssuer.status).toBe(302);
    seen.callback = await tamper(new URL(atIssuer.headers.get("location")!));
    const landed = await fetch(seen.callback);
    seen.page = { status: landed.status, text: await landed.text() };
  };
}

const login = (openUrl: (url: string) => Promise<void>, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
  loginWithAuthorizationCode({
    metadata,
    clientId: TEST_CLIENT_ID,
    scopes: ["openid", "email", "fleet.read"],
    openUrl,
    ...extra,
  });

describe("authorization code with PKCE on a loopback redirect", () => {
  it("signs a person in: S256 challenge, loopback redirect, the verifier proven at the token endpoint", async () => {
    const seen: Partial<Browsed> = {};
    const tokens = await login(browser(seen));

    const q = seen.authorizeUrl!.searchParams;
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(q.get("state")!.length).toBeGreaterThanOrEqual(32);
    expect(seen.page!.status).toBe(200);
    expect(seen.page!.text).toContain("return to the terminal");
    const exchange = issuer.tokenRequests.at(-1)!;
    expect(exchange.form.grant_type).toBe("authorization_code");
    expect(createHash("sha256").update(exchange.form.code_verifier!).digest("base64url")).toBe(q.get("code_challenge"));

    expect(tokens.tokenType).toBe("Bearer");
    expect(tokens.scope).toEqual(["openid", "email", "fleet.read"]);
    expect(tokens.refreshToken).toBeTruthy();
    expect(tokens.expiresAt).toBeGreaterThan(Date.now());
    expect(decodeJwt(tokens.idToken!).email).toBe("ana@example.com");
    expect(decodeJwt(tokens.accessToken)).toMatchObject({
      aud: "fleet-manager",
      email: "ana@example.com",
      groups: ["fleet-admins"],
      scope: "openid email fleet.read",
    });
    // The loopback server is gone once the login is over.
    await expect(fetch(seen.callback!)).rejects.toThrow();
  });

  it("refuses a redirect whose state is not this login's, and exchanges nothing", async () => {
    const seen: Partial<Browsed> = {};
    const before = issuer.tokenRequests.length;
    const forged = (u: URL) => {
      u.searchParams.set("state", "someone-elses-state");
      return u;
    };
    const err = await login(browser(seen, forged)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ error: "invalid_state" });
    expect(seen.page).toMatchObject({ status: 400, text: expect.stringContaining("state mismatch") });
    expect(issuer.tokenRequests.length).toBe(before);
  });

  it("a code injected from another authorization request fails PKCE at the issuer", async () => {
    const seen: Partial<Browsed> = {};
    // The attacker's own authorization request, for the same redirect URI but with a challenge
    // whose verifier this login does not hold; its code replaces the one the browser carries.
    const inject = async (u: URL) => {
      const theirs = new URL(metadata.authorizationEndpoint!);
      theirs.search = new URLSearchParams({
        response_type: "code",
        client_id: TEST_CLIENT_ID,
        redirect_uri: `${u.origin}${u.pathname}`,
        code_challenge: createHash("sha256").update("the attacker's verifier").digest("base64url"),
        code_challenge_method: "S256",
      }).toString();
      const location = (await fetch(theirs, { redirect: "manual" })).headers.get("location")!;
      u.searchParams.set("code", new URL(location).searchParams.get("code")!);
      return u;
    };
    const err = await login(browser(seen, inject)).catch((e: unknown) => e);
    expect(err).toMatchObject({ error: "invalid_grant", status: 400, description: "PKCE verification failed" });
    expect(seen.page).toMatchObject({ status: 502, text: expect.stringContaining("invalid_grant") });
  });

  it("surfaces the issuer's refusal (the person declines) as an OAuthError", async () => {
    issuer.setUser(undefined);
    const seen: Partial<Browsed> = {};
    const err = await login(browser(seen)).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "OAuthError", error: "access_denied", description: "the user declined" });
    expect(seen.page!.text).toContain("access_denied");
  });

  it("gives up when nobody comes back from the browser, and when aborted", async () => {
    let opened = "";
    const timedOut = await login(async (url) => void (opened = url), { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ error: "timeout" });
    // The loopback port was released.
    await expect(fetch(new URL(opened).searchParams.get("redirect_uri")!)).rejects.toThrow();

    const controller = new AbortController();
    const aborted = await login(async () => controller.abort(new Error("interrupted")), {
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(aborted).toMatchObject({ message: "interrupted" });
  });

  it("never puts the code or the verifier in an error message", async () => {
    const seen: Partial<Browsed> = {};
    const inject = (u: URL) => {
      u.searchParams.set("code", "a-code-the-issuer-never-issued");
      return u;
    };
    const err = (await login(browser(seen, inject)).catch((e: unknown) => e)) as OAuthError;
    expect(err.error).toBe("invalid_grant");
    expect(err.message).not.toContain("a-code-the-issuer-never-issued");
    expect(err.message).not.toContain(issuer.tokenRequests.at(-1)!.form.code_verifier);
  });
});

describe("the hub honours what the person asked for at login", () => {
  it("an admin who logs in for fleet.read can read and cannot create; logged in without it, can", async () => {
    const identity = testIdentity("");
    const hub = await startOAuthTestHub({
      identity: {
        ...identity,
        config: {
          ...identity.config,
          external: {
            issuer: issuer.issuer,
            audience: "fleet-manager",
            mapping: { groups: { "fleet-admins": ["fleet.admin"] } },
          },
        },
      },
    });
    try {
      const createSite = (token: string, slug: string) =>
        fetch(`${hub.url}/api/v1/sites/`, {
          method: "POST",
          headers: { "content-type": "application/json", ...bearer(token) },
          body: JSON.stringify({ slug, name: slug }),
        });
      const readOnly = await login(browser({}));
      expect((await fetch(`${hub.url}/api/v1/sites/`, { headers: bearer(readOnly.accessToken) })).status).toBe(200);
      const refused = await createSite(readOnly.accessToken, "by-read-only");
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);

      const full = await loginWithAuthorizationCode({
        metadata,
        clientId: TEST_CLIENT_ID,
        scopes: ["openid", "email"],
        openUrl: browser({}),
      });
      expect((await createSite(full.accessToken, "by-full-login")).status).toBe(201);
    } finally {
      await hub.close();
    }
  });
});
