/**
 * The web UI's login held by the hub, against the real test OIDC issuer over HTTP: the cookie's
 * attributes, what the database keeps (a hash, sealed tokens), the CSRF checks, both clocks of a
 * session on both sides of their edge, the renewal of the access token (once across concurrent
 * requests; kept through an issuer outage; ended by a refusal), logout, and the failed logins.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { startOAuthTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";

const HOST = "127.0.0.1:8080";
const ORIGIN = `http://${HOST}`;
const IDLE_S = 3600;
const MAX_S = 4 * 3600;
const ADA = { email: "ada@example.com", groups: ["fleet-operators"] };

let issuer: TestIssuer;
let hub: TestHub & { adminToken: string };

beforeAll(async () => {
  issuer = await startTestIssuer({ clientIds: ["fleet-web"] });
  const identity = testIdentity("");
  hub = await startOAuthTestHub({
    identity: {
      ...identity,
      config: {
        ...identity.config,
        external: {
          issuer: issuer.issuer,
          audience: "fleet-manager",
          mapping: {
            emailDomains: { "example.com": ["fleet.read"] },
            groups: { "fleet-operators": ["fleet.operate"] },
          },
        },
      },
    },
    webUi: { dir: "/nonexistent", clientId: "fleet-web", sessionIdleS: IDLE_S, sessionMaxS: MAX_S },
  });
});
afterAll(async () => {
  await hub?.close();
  await issuer?.close();
});
beforeEach(() => issuer.setUser(ADA));

const setCookies = (headers: Record<string, unknown>): string[] => {
  const v = headers["set-cookie"];
  return v === undefined ? [] : Array.isArray(v) ? (v as string[]) : [String(v)];
};
const cookieValue = (setCookie: string) => setCookie.split(";")[0]!.split("=").slice(1).join("=");

/** A person's whole login, as the browser makes it: the hub, the issuer, back to the hub. */
async function logIn(returnTo = "/ui/devices?site=keflavik") {
  const start = await hub.app.inject({
    url: `/ui/login?${new URLSearchParams({ returnTo })}`,
    headers: { host: HOST },
  });
  expect(start.statusCode).toBe(302);
  const loginCookie = setCookies(start.headers)[0]!;
  const atIssuer = await fetch(start.headers.location as string, { redirect: "manual" });
  const back = new URL(atIssuer.headers.get("location")!);
  const callback = await hub.app.inject({
    url: back.pathname + back.search,
    headers: { host: HOST, cookie: loginCookie.split(";")[0]! },
  });
  const session = setCookies(callback.headers).find((c) => c.startsWith("__Host-fm-session="));
  return { start, loginCookie, back, callback, session, cookie: session ? session.split(";")[0]! : "" };
}

const asUi = (cookie: string, more: Record<string, string> = {}) => ({ host: HOST, cookie, "x-fm-csrf": "1", ...more });
const whoami = (cookie: string, more: Record<string, string> = {}) =>
  hub.app.inject({ url: "/api/v1/whoami", headers: asUi(cookie, more) });
const row = async (cookie: string) => {
  const hash = createHash("sha256").update(cookie.split("=")[1]!).digest("hex");
  return { hash, row: await hub.db.prisma.webSession.findUnique({ where: { idHash: hash } }) };
};
const setRow = async (cookie: string, data: Record<string, Date>) =>
  hub.db.prisma.webSession.update({ where: { idHash: (await row(cookie)).hash }, data });
const refreshes = () => issuer.tokenRequests.filter((r) => r.form.grant_type === "refresh_token").length;

describe("logging in to the web UI through the hub", () => {
  it("sends the browser to the issuer with PKCE and a state, and back to the page it started from with a session cookie", async () => {
    const { start, loginCookie, back, callback, session } = await logIn();
    const authorize = new URL(start.headers.location as string);
    expect(authorize.origin + authorize.pathname).toBe(`${issuer.issuer}/authorize`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${ORIGIN}/ui/callback`);
    expect(authorize.searchParams.get("client_id")).toBe("fleet-web");
    const state = authorize.searchParams.get("state")!;
    expect(loginCookie).toMatch(new RegExp(`^__Host-fm-login\\.${state}=`));
    expect(loginCookie).toContain("; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax");
    // The verifier is sealed in the cookie, not readable in it.
    expect(cookieValue(loginCookie)).not.toContain(state);
    expect(back.searchParams.get("state")).toBe(state);

    expect(callback.statusCode).toBe(303);
    expect(callback.headers.location).toBe("/ui/devices?site=keflavik");
    expect(callback.headers["cache-control"]).toBe("no-store");
    expect(session).toMatch(
      /^__Host-fm-session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=14400; HttpOnly; Secure; SameSite=Strict$/,
    );
    // The login's own cookie is spent.
    expect(setCookies(callback.headers)).toContain(
      `__Host-fm-login.${state}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`,
    );
  });

  it("makes the cookie the person's: whoami answers who they are and what the scope mapping grants", async () => {
    const { cookie } = await logIn();
    const res = await whoami(cookie);
    expect(res.statusCode).toBe(200);
    const who = res.json<{ principal: string; kind: string; scopes: string[] }>();
    expect(who).toMatchObject({ principal: "person:ada@example.com", kind: "person" });
    expect(who.scopes).toEqual(expect.arrayContaining(["fleet.read", "fleet.operate"]));
    expect(who.scopes).not.toContain("fleet.admin");
  });

  it("keeps only the id's SHA-256 and the tokens sealed in the database", async () => {
    const { cookie } = await logIn();
    const { row: r } = await row(cookie);
    expect(r).not.toBeNull();
    const issued = issuer.tokenRequests.at(-1)!;
    expect(issued.form.grant_type).toBe("authorization_code");
    const all = JSON.stringify(await hub.db.prisma.webSession.findMany());
    expect(all).not.toContain(cookie.split("=")[1]);
    expect(r!.tokensSealed).toMatch(/^v1\./);
    // Nothing token-shaped (a JWT's header) in the row.
    expect(all).not.toContain("eyJ");
  });

  it("returns only to a page of the UI on this hub", async () => {
    for (const returnTo of [
      "//evil.example/ui/",
      "https://evil.example/ui/",
      "/api/v1/sites",
      "/ui/login",
      "/ui\\@evil",
    ]) {
      const { callback } = await logIn(returnTo);
      expect(callback.headers.location, returnTo).toBe("/ui/");
    }
    expect((await logIn("/ui/jobs?state=RUNNING")).callback.headers.location).toBe("/ui/jobs?state=RUNNING");
  });

  it("refuses a callback this browser did not start, a replayed one, and one the issuer refused, each saying why", async () => {
    const first = await logIn();
    // The same redirect again, without the login's cookie (the browser dropped it) and with it (a replay).
    const again = await hub.app.inject({ url: first.back.pathname + first.back.search, headers: { host: HOST } });
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe("/ui/?login_error=login_not_started");
    expect(setCookies(again.headers).some((c) => c.startsWith("__Host-fm-session="))).toBe(false);
    const replay = await hub.app.inject({
      url: first.back.pathname + first.back.search,
      headers: { host: HOST, cookie: first.loginCookie.split(";")[0]! },
    });
    // The issuer honours a code once (RFC 6749 §4.1.2).
    expect(replay.headers.location).toBe("/ui/devices?site=keflavik&login_error=exchange_failed");

    issuer.setUser(undefined);
    const denied = await logIn();
    expect(denied.callback.headers.location).toBe(
      "/ui/devices?site=keflavik&login_error=issuer_refused&issuer_error=access_denied",
    );
    expect(denied.session).toBeUndefined();
  });

  it("refuses a person the scope mapping grants nothing", async () => {
    issuer.setUser({ email: "eve@elsewhere.example", groups: [] });
    const { callback, session } = await logIn();
    expect(callback.headers.location).toBe("/ui/devices?site=keflavik&login_error=no_access");
    expect(session).toBeUndefined();
  });
});

describe("a request with the session cookie", () => {
  it("is refused 403 csrf_refused without X-FM-CSRF, from another origin, and as a change without an Origin", async () => {
    const { cookie } = await logIn();
    const noHeader = await hub.app.inject({ url: "/api/v1/whoami", headers: { host: HOST, cookie } });
    expect(noHeader.statusCode).toBe(403);
    expect(noHeader.headers["content-type"]).toContain("application/problem+json");
    expect(noHeader.json()).toMatchObject({ code: "csrf_refused", detail: expect.stringContaining("X-FM-CSRF") });
    const otherOrigin = await whoami(cookie, { origin: "https://evil.example" });
    expect(otherOrigin.statusCode).toBe(403);
    expect(otherOrigin.json()).toMatchObject({ code: "csrf_refused" });
    const cordon = (headers: Record<string, string>) =>
      hub.app.inject({
        method: "PATCH",
        url: "/api/v1/devices/00000000-0000-4000-8000-000000000000",
        headers: { ...headers, "if-match": '"1"' },
        payload: { cordoned: true, cordonReason: "csrf check" },
      });
    expect((await cordon(asUi(cookie))).json()).toMatchObject({ code: "csrf_refused" });
    expect((await cordon(asUi(cookie, { origin: "https://evil.example" }))).json()).toMatchObject({
      code: "csrf_refused",
    });
    // From the hub's own origin it passes the checks and reaches the route (no such device).
    expect((await cordon(asUi(cookie, { origin: ORIGIN }))).statusCode).toBe(404);
    expect((await whoami(cookie, { origin: ORIGIN })).statusCode).toBe(200);
  });

  it("with a bearer token beside it is the token's, and a cookie of no session is 401 and cleared", async () => {
    const res = await hub.app.inject({
      url: "/api/v1/whoami",
      headers: { authorization: `Bearer ${hub.adminToken}`, cookie: "__Host-fm-session=x" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ principal: "fleet-admin" });
    const none = await whoami("__Host-fm-session=" + "A".repeat(43));
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: "session_ended" });
    expect(setCookies(none.headers)).toContain(
      "__Host-fm-session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict",
    );
  });
});

describe("a session's clocks", () => {
  it(`ends ${IDLE_S} s after its last request, not before`, async () => {
    const { cookie } = await logIn();
    await setRow(cookie, { lastSeenAt: new Date(Date.now() - (IDLE_S - 30) * 1000) });
    expect((await whoami(cookie)).statusCode).toBe(200);
    // That request was the last one: the clock starts again from it.
    expect((await row(cookie)).row!.lastSeenAt.getTime()).toBeGreaterThan(Date.now() - 10_000);
    await setRow(cookie, { lastSeenAt: new Date(Date.now() - IDLE_S * 1000 - 1000) });
    const late = await whoami(cookie);
    expect(late.statusCode).toBe(401);
    expect(late.json()).toMatchObject({ code: "session_ended", detail: expect.stringContaining("without use") });
    expect((await row(cookie)).row).toBeNull();
  });

  it(`ends ${MAX_S} s after login whatever happens, not before`, async () => {
    const { cookie } = await logIn();
    const { row: r } = await row(cookie);
    expect(r!.expiresAt.getTime() - r!.createdAt.getTime()).toBe(MAX_S * 1000);
    await setRow(cookie, { expiresAt: new Date(Date.now() + 30_000) });
    expect((await whoami(cookie)).statusCode).toBe(200);
    await setRow(cookie, { expiresAt: new Date(Date.now() - 1000) });
    const late = await whoami(cookie);
    expect(late.statusCode).toBe(401);
    expect(late.json()).toMatchObject({ code: "session_ended", detail: expect.stringContaining("maximum length") });
  });
});

describe("renewing the person's access token", () => {
  it("is done a minute before it expires, not earlier, and once for many requests at a time", async () => {
    const { cookie } = await logIn();
    const before = refreshes();
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() + 90_000) });
    expect((await whoami(cookie)).statusCode).toBe(200);
    expect(refreshes()).toBe(before);
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() + 30_000) });
    const answers = await Promise.all(Array.from({ length: 6 }, () => whoami(cookie)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    // One renewal: the issuer rotates refresh tokens and would revoke the family on a replay.
    expect(refreshes()).toBe(before + 1);
    expect(issuer.tokenRequests.at(-1)!.answer).toBe("tokens");
    expect((await row(cookie)).row!.accessExpiresAt.getTime()).toBeGreaterThan(Date.now() + 500_000);
  });

  it("keeps the session while the issuer cannot answer, and says 503 once the token has run out", async () => {
    const { cookie } = await logIn();
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() + 30_000) });
    issuer.unavailableNext(1);
    expect((await whoami(cookie)).statusCode).toBe(200);
    expect((await row(cookie)).row).not.toBeNull();
    // Not asked again at once: the next try waits 15 s.
    const after = refreshes();
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() - 1000) });
    const expired = await whoami(cookie);
    expect(expired.statusCode).toBe(503);
    expect(expired.json()).toMatchObject({ code: "login_service_unavailable" });
    expect(expired.headers["retry-after"]).toBe("15");
    expect(refreshes()).toBe(after);
    expect((await row(cookie)).row).not.toBeNull();
  });

  it("ends the session when the issuer refuses the refresh token", async () => {
    const { cookie } = await logIn();
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() + 30_000) });
    expect((await whoami(cookie)).statusCode).toBe(200);
    // Replaying the rotated refresh token makes the issuer revoke its whole family (RFC 9700 §4.14.2).
    const used = issuer.tokenRequests.filter((r) => r.form.grant_type === "refresh_token").at(-1)!.form;
    const replay = await fetch(`${issuer.issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(used),
    });
    expect(replay.status).toBe(400);
    await setRow(cookie, { accessExpiresAt: new Date(Date.now() + 30_000) });
    const refused = await whoami(cookie);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ code: "session_ended", detail: expect.stringContaining("invalid_grant") });
    expect((await row(cookie)).row).toBeNull();
  });
});

describe("logging out", () => {
  it("ends the session for every tab, and needs the CSRF header", async () => {
    const { cookie } = await logIn();
    const forged = await hub.app.inject({ method: "POST", url: "/ui/logout", headers: { host: HOST, cookie } });
    expect(forged.statusCode).toBe(403);
    expect((await whoami(cookie)).statusCode).toBe(200);
    const out = await hub.app.inject({ method: "POST", url: "/ui/logout", headers: asUi(cookie, { origin: ORIGIN }) });
    expect(out.statusCode).toBe(200);
    // The test issuer offers no RP-initiated logout.
    expect(out.json()).toEqual({ endSessionUrl: null });
    expect(setCookies(out.headers)).toContain(
      "__Host-fm-session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict",
    );
    expect((await row(cookie)).row).toBeNull();
    expect((await whoami(cookie)).statusCode).toBe(401);
  });
});
