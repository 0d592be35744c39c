/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web UI's login module (apps/web/src/auth.ts, the real one) against the real test OIDC
 * issuer over HTTP: a refresh that fails for a passing reason (the issuer answering 503, or not
 * answering at all) keeps the person logged in and succeeds on the next try; one the issuer
 * refuses (invalid_grant) logs them out. Node runs the module; the few browser objects it uses
 * are given the way a browser has them: its origin and navigation (`location`), a
 * sessionStorage, and fetch resolving a relative URL against the origin. The hub's part, the
 * UI's /ui/config.json, is a tiny server giving what the hub gives: the issuer and client id.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
// The module itself is imported once the browser objects it reads are in place (beforeAll).
import type * as AuthModule from "../apps/web/src/auth.ts";

type Auth = typeof AuthModule;

const CLIENT_ID = "fleet-web";
let issuer: TestIssuer;
let hub: Server;
let auth: Auth;
const navigations: string[] = [];

beforeAll(async () => {
  issuer = await startTestIssuer({ clientIds: [CLIENT_ID] });
  issuer.setUser({ email: "ada@example.com", groups: ["fleet-operators"] });
  hub = createServer((req, res) => {
    if (req.url === "/ui/config.json")
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer: issuer.issuer, clientId: CLIENT_ID }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => hub.listen(0, "127.0.0.1", () => r()));
  const origin = `http://127.0.0.1:${(hub.address() as { port: number }).port}`;
  const store = new Map<string, string>();
  const nodeFetch = globalThis.fetch;
  Object.assign(globalThis, {
    location: { origin, assign: (url: string) => navigations.push(url) },
    sessionStorage: {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
      removeItem: (k: string) => void store.delete(k),
    },
    fetch: (input: string | URL, init?: RequestInit) => nodeFetch(new URL(input, origin), init),
  });
  auth = await import("../apps/web/src/auth.ts");
});
afterAll(async () => {
  auth?.logout();
  await issuer?.close();
  await new Promise((r) => hub?.close(r));
});

/** Logs in as a person does: to the issuer's authorization page, and back with its code. */
async function logIn(): Promise<void> {
  await auth.loadConfig();
  await auth.startLogin("/ui/devices");
  const answer = await fetch(navigations.at(-1)!, { redirect: "manual" });
  const back = new URL(answer.headers.get("location")!);
  expect(back.pathname).toBe("/ui/callback");
  await expect(auth.completeLogin(back.search)).resolves.toBe("/ui/devices");
}
const refreshAnswers = () =>
  issuer.tokenRequests.filter((r) => r.form.grant_type === "refresh_token").map((r) => r.answer);

describe("the web UI's token refresh", () => {
  it("keeps the person logged in when the issuer answers 503, and renews on the next try", async () => {
    await logIn();
    const first = auth.accessToken();
    expect(first).toBeTruthy();
    issuer.unavailableNext(1);
    await expect(auth.refresh()).resolves.toBe(false);
    expect(auth.isLoggedIn()).toBe(true);
    expect(auth.accessToken()).toBe(first);
    await expect(auth.refresh()).resolves.toBe(true);
    expect(auth.accessToken()).not.toBe(first);
    expect(refreshAnswers()).toEqual(["tokens"]);
  });

  it("keeps the person logged in when the issuer cannot be reached", async () => {
    const token = auth.accessToken();
    const nodeFetch = globalThis.fetch;
    globalThis.fetch = (input, init) =>
      String(input).startsWith(issuer.issuer) ? Promise.reject(new TypeError("fetch failed")) : nodeFetch(input, init);
    try {
      await expect(auth.refresh()).resolves.toBe(false);
    } finally {
      globalThis.fetch = nodeFetch;
    }
    expect(auth.isLoggedIn()).toBe(true);
    expect(auth.accessToken()).toBe(token);
  });

  it("logs the person out of this tab when the issuer refuses the refresh token", async () => {
    // Replaying an already rotated refresh token makes the issuer revoke the whole family
    // (RFC 9700 4.14.2): the one this tab holds is refused from then on.
    const used = issuer.tokenRequests.find((r) => r.form.grant_type === "refresh_token")!.form;
    const replay = await fetch(`${issuer.issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(used),
    });
    expect(replay.status).toBe(400);
    await expect(auth.refresh()).resolves.toBe(false);
    expect(refreshAnswers().at(-1)).toBe("invalid_grant");
    expect(auth.isLoggedIn()).toBe(false);
  });
});
