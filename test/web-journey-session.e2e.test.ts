/**
 * Journeys through the UI's shell as a person makes them: logged in on a first page, then only
 * clicking and typing (the lint rule for test/web-journey-*.e2e.test.ts refuses any other way in).
 * Covers the main menu on a wide and a phone-sized window, and the hub going away and coming back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import type { Page } from "playwright-core";
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

/** Each entry of the main menu and the heading its view shows. */
const MENU: [entry: string, heading: RegExp][] = [
  ["Devices", /^Devices$/],
  ["Discrepancies", /^Discrepancies$/],
  ["Jobs", /^Jobs$/],
  ["Satellites", /^Satellites$/],
  ["Audit log", /^Audit log$/],
  ["Overview", /^Fleet overview$/],
];

async function stillLoggedIn(page: Page): Promise<void> {
  await expect(page.getByTestId("who").textContent()).resolves.toContain("ada@example.com");
  await expect(page.getByRole("button", { name: "Log out" }).isVisible()).resolves.toBe(true);
  await expect(page.getByRole("button", { name: "Log in" }).count()).resolves.toBe(0);
}

describe("the UI's shell", { timeout: 120_000 }, () => {
  it.each([
    ["a wide window (1280 px)", 1280, false],
    ["a phone (390 px), behind the Menu button", 390, true],
  ])("opens every menu entry on %s and keeps the person logged in", async (_what, width, behindMenu) => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/", { viewport: { width, height: 800 } });
    await page.getByRole("heading", { level: 1, name: /^Fleet overview$/ }).waitFor();
    const nav = page.getByRole("navigation", { name: "Main" });
    // The entry as the accessibility tree holds it, also while the phone's menu is folded away.
    const link = (entry: string) =>
      page
        .getByRole("navigation", { name: "Main", includeHidden: true })
        .getByRole("link", { name: entry, exact: true, includeHidden: true });
    for (const [entry, heading] of MENU) {
      if (behindMenu) {
        await page.getByRole("button", { name: "Menu" }).click();
        await expect(page.getByRole("button", { name: "Menu" }).getAttribute("aria-expanded")).resolves.toBe("true");
      }
      await nav.getByRole("link", { name: entry, exact: true }).click();
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await stillLoggedIn(page);
      await expect(link(entry).getAttribute("aria-current")).resolves.toBe("page");
      // On a phone the menu closes once an entry is chosen.
      if (behindMenu) await expect(link(entry).isVisible()).resolves.toBe(false);
    }
    await context.close();
  });

  it("says the hub cannot be reached, with Retry, and shows the view once the hub answers again", async () => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/");
    await page.getByRole("heading", { level: 1, name: /^Fleet overview$/ }).waitFor();
    const nav = page.getByRole("navigation", { name: "Main" });
    const banner = page.getByTestId("hub-banner");
    await expect(banner.count()).resolves.toBe(0);
    try {
      // The hub stops answering (its process frozen): the person opens Devices.
      env.hub.proc.kill("SIGSTOP");
      await nav.getByRole("link", { name: "Devices", exact: true }).click();
      await banner.waitFor({ timeout: 60_000 });
      await expect(banner.textContent()).resolves.toContain("The hub cannot be reached");
      await expect(page.getByText("Failed to fetch").count()).resolves.toBe(0);
      await page.getByText("The hub cannot be reached.", { exact: true }).waitFor();
      await expect(page.getByText("Loading…").count()).resolves.toBe(0);
      await page.getByText("Waiting for the hub to answer.").waitFor();
      // Back: the person presses Retry and gets the view.
      env.hub.proc.kill("SIGCONT");
      await banner.getByRole("button", { name: "Retry" }).click();
      await page.getByTestId("device-count").waitFor();
      await expect(banner.count()).resolves.toBe(0);
      await stillLoggedIn(page);

      // Gone again while the person opens Jobs; back again, and the banner leaves by itself.
      env.hub.proc.kill("SIGSTOP");
      await nav.getByRole("link", { name: "Jobs", exact: true }).click();
      await banner.waitFor({ timeout: 60_000 });
      env.hub.proc.kill("SIGCONT");
      await banner.waitFor({ state: "detached", timeout: 60_000 });
      await page.getByRole("heading", { level: 1, name: /^Jobs$/ }).waitFor();
      await page.getByRole("table").waitFor();
      await stillLoggedIn(page);
    } finally {
      env.hub.proc.kill("SIGCONT");
    }
    await context.close();
  });
});
