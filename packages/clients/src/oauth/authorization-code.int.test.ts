/**
 * A person's browser login against the test OIDC issuer over real HTTP. The test plays the
 * browser: it opens the authorization URL, follows the issuer's redirect to the loopback
 * server and reads the page it is shown.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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

  it("refuses a redirect whose state is not this login's, exchanges nothing, and keeps waiting for the real one", async () => {
    const seen: Partial<Browsed> = {};
    const before = issuer.tokenRequests.length;
    let forgedPage: { status: number; text: string } | undefined;
    // Another page fires a forged redirect at the loopback first (login CSRF); then the
    // person's own browser arrives with the issuer's redirect.
    const forgedFirst = async (u: URL) => {
      const forged = new URL(u);
      forged.searchParams.set("state", "someone-elses-state");
      forged.searchParams.set("code", "attackers-code");
      const res = await fetch(forged);
      forgedPage = { status: res.status, text: await res.text() };
      expect(issuer.tokenRequests.length).toBe(before);
      return u;
    };
    const tokens = await login(browser(seen, forgedFirst));
    expect(forgedPage).toMatchObject({ status: 400, text: expect.stringContaining("state mismatch") });
    expect(seen.page).toMatchObject({ status: 200 });
    expect(tokens.tokenType).toBe("Bearer");
    expect(issuer.tokenRequests.slice(before).map((r) => r.form.code)).not.toContain("attackers-code");
  });

  it("a login that only ever sees forged redirects times out and says so", async () => {
    const forged = (u: URL) => {
      u.searchParams.set("state", "someone-elses-state");
      return u;
    };
    const seen: Partial<Browsed> = {};
    const err = await login(browser(seen, forged), { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ error: "timeout" });
    expect((err as Error).message).toContain("1 redirect(s) with another login's state were refused");
    expect(seen.page).toMatchObject({ status: 400 });
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
    /** The error and the browser's page must name neither secret of the exchange. */
    const expectSilent = (err: unknown, page: string | undefined, secrets: string[]) => {
      expect(err).toBeInstanceOf(Error);
      const said = `${(err as Error).message} ${String((err as OAuthError).description)} ${page}`;
      for (const secret of secrets) expect(said).not.toContain(secret);
    };
    // The issuer refuses the code.
    const seen: Partial<Browsed> = {};
    const inject = (u: URL) => {
      u.searchParams.set("code", "a-code-the-issuer-never-issued");
      return u;
    };
    const err = (await login(browser(seen, inject)).catch((e: unknown) => e)) as OAuthError;
    expect(err.error).toBe("invalid_grant");
    expectSilent(err, seen.page?.text, [
      "a-code-the-issuer-never-issued",
      issuer.tokenRequests.at(-1)!.form.code_verifier!,
    ]);

    // A token endpoint (a proxy in front of it) that fails with a page echoing the request, and
    // one that answers 200 with something not a token: the exchange's failure quotes neither.
    const echoed: Record<string, string>[] = [];
    const proxy = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        echoed.push(Object.fromEntries(new URLSearchParams(body)));
        const bad = echoed.length === 1;
        res.writeHead(bad ? 502 : 200, { "content-type": bad ? "text/plain" : "application/json" });
        res.end(bad ? `Bad gateway while forwarding: ${body}` : JSON.stringify({ echo: body }));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const tokenEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/token`;
      for (const status of [502, 200]) {
        const page: Partial<Browsed> = {};
        const failed = await loginWithAuthorizationCode({
          metadata: { ...metadata, tokenEndpoint },
          clientId: TEST_CLIENT_ID,
          scopes: ["openid"],
          openUrl: browser(page),
        }).catch((e: unknown) => e);
        const form = echoed.at(-1)!;
        expect(form.code, String(status)).toBeTruthy();
        expect(page.page?.status, String(status)).toBe(502);
        expectSilent(failed, page.page?.text, [form.code!, form.code_verifier!]);
      }
    } finally {
      await new Promise((r) => proxy.close(r));
    }
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
