/**
 * Staying logged in as a person does it all day: a shared link with filters logs in and lands
 * on that page, a reload and a new tab keep the session, page scripts cannot read it, a logout
 * in one tab ends it in the others (which then return to their page after logging in again), a
 * logged-out person's shared link goes through the login to the page it names, and a login the
 * issuer refuses says so. The hub holds the tokens; the browser a `__Host-` session cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { USERS, seedDemo, startWebEnv, type WebEnv } from "./web-env.ts";

let db: TestDatabase;
let env: WebEnv;
beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  await seedDemo(db.url, 5);
  env = await startWebEnv(db.url);
}, 180_000);
afterAll(async () => {
  await env?.stop();
  await db?.drop();
}, 60_000);

const loggedInAs = async (page: Page, email: string) => {
  await page.getByRole("button", { name: "Log out" }).waitFor();
  await expect(page.getByTestId("who").textContent()).resolves.toContain(email);
};
const sessionCookie = async (context: BrowserContext) =>
  (await context.cookies()).find((c) => c.name === "__Host-fm-session");

describe("a person's session in the web UI", { timeout: 120_000 }, () => {
  it("logs in from a shared link with filters, lands on it, and keeps the session across a reload and a new tab", async () => {
    const path = "/ui/devices?site=keflavik&cordoned=true";
    const { context, page } = await env.loggedIn(USERS.operator, path);
    await loggedInAs(page, "ada@example.com");
    // Back on the page the login started from, filters and all.
    const landed = new URL(page.url());
    expect(landed.pathname + landed.search).toBe(path);
    await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();

    // The session is a cookie page scripts cannot read, sent to this hub only, never to another site's requests.
    const cookie = await sessionCookie(context);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    expect(cookie!.domain).toBe("127.0.0.1");

    const issuerLogins = () =>
      env.issuer.tokenRequests.filter((r) => r.form.grant_type === "authorization_code").length;
    const logins = issuerLogins();
    await env.pressReload(page);
    await loggedInAs(page, "ada@example.com");
    expect(new URL(page.url()).search).toBe("?site=keflavik&cordoned=true");
    await expect(page.getByRole("button", { name: "Log in" }).count()).resolves.toBe(0);

    const other = await env.openShared(context, `${env.hub.url}/ui/jobs`);
    await loggedInAs(other, "ada@example.com");
    await other.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    // Neither went back to the issuer: the hub's session answered.
    expect(issuerLogins()).toBe(logins);
    await context.close();
  });

  it("ends in every tab at a logout in one; another tab logs in again and returns to its page", async () => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/");
    await loggedInAs(page, "ada@example.com");
    const second = await env.openShared(context, `${env.hub.url}/ui/satellites`);
    await loggedInAs(second, "ada@example.com");

    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
    expect(await sessionCookie(context)).toBeUndefined();

    // The other tab learns at its next call: here the person opens Audit log from its menu.
    await second.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
    await second.getByRole("button", { name: "Log in" }).waitFor();
    await expect(second.getByRole("status").textContent()).resolves.toMatch(/session has ended|log in again/i);
    await second.getByRole("button", { name: "Log in" }).click();
    await loggedInAs(second, "ada@example.com");
    await second.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    expect(new URL(second.url()).pathname).toBe("/ui/audit");
    await context.close();
  });

  it("takes a logged-out person's shared link through the login to the page it names", async () => {
    const listed = await env.api<{ items: { id: string; name: string }[] }>("/api/v1/devices/?site=keflavik&limit=1");
    const device = listed.body.items[0];
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 800 } });
    env.issuer.setUser(USERS.reader);
    const page = await env.openShared(context, `${env.hub.url}/ui/devices/${device!.id}`);
    await page.getByRole("button", { name: "Log in" }).click();
    await loggedInAs(page, "bob@example.com");
    await page.getByRole("heading", { level: 1, name: device!.name }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/devices/${device!.id}`);
    await context.close();
  });

  it("says why when the issuer does not let the person in, and logs in on the next try", async () => {
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 800 } });
    env.issuer.setUser(undefined);
    const page = await env.openShared(context, `${env.hub.url}/ui/jobs`);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain(
      "The login service did not let you in (access_denied)",
    );
    expect(await sessionCookie(context)).toBeUndefined();
    env.issuer.setUser(USERS.operator);
    await page.getByRole("button", { name: "Log in" }).click();
    await loggedInAs(page, "ada@example.com");
    // The failed login's words are gone from the address; the page is the one first asked for.
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/ui/jobs");
    await context.close();
  });
});
