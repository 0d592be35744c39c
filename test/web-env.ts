/**
 * What the web UI's browser tests, its screenshots and its benchmark share: a real hub process
 * serving the built UI, on its own database holding the demo inventory (seeded by the same
 * command as `npm run seed:demo`), a local OIDC issuer the hub logs people in through (the test
 * issuer, over real HTTP), and Debian's Chromium driven by playwright-core.
 */
import { spawn } from "node:child_process";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { startTestIssuer, type TestIssuer, type TestUser } from "@fm/test-support/oidc-issuer";
import { freePort } from "@fm/test-support/ports";
import {
  ADMIN_SECRET,
  REPO_ROOT,
  clientToken,
  hubApi,
  startHub,
  type HubApi,
  type HubProcess,
} from "@fm/test-support/process";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const WEB_CLIENT_ID = "fleet-web";

/** People of example.com read; the groups below may operate and administer (the hub's scope mapping). */
export const USERS = {
  operator: { email: "ada@example.com", groups: ["fleet-operators"] },
  reader: { email: "bob@example.com", groups: [] },
  admin: { email: "grace@example.com", groups: ["fleet-admins"] },
} satisfies Record<string, TestUser>;

export interface WebEnv {
  hub: HubProcess;
  issuer: TestIssuer;
  browser: Browser;
  /** fleet-admin's API, straight over HTTP (to set up and to check what the UI did). */
  api: HubApi;
  /** A browser context (its own tabs, no shared tokens) for a person, logged in on its first page. */
  loggedIn(user: TestUser, path?: string, o?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>;
  /**
   * A person pastes a shared URL into a new tab of the same browser (context): the one way a
   * journey opens a second page without going through the UI's own links.
   */
  openShared(context: BrowserContext, url: string): Promise<Page>;
  /** The person presses Reload (F5): the one way a journey reloads a page. */
  pressReload(page: Page): Promise<void>;
  stop(): Promise<void>;
}

/** `npm run seed:demo`'s command, against this database. */
export async function seedDemo(databaseUrl: string, devicesPerSite: number): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", "apps/hub/src/seed/demo-cli.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DEMO_DEVICES_PER_SITE: String(devicesPerSite),
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on("exit", r));
  if (code !== 0) throw new Error(`seed:demo exited ${code}: ${stderr}`);
}

/** Opens `path` under /ui/, presses "Log in", and waits until the issuer has sent the person back, logged in. */
export async function logIn(page: Page, hubUrl: string, path = "/ui/"): Promise<void> {
  await page.goto(`${hubUrl}${path}`);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("button", { name: "Log out" }).waitFor();
}

export async function startWebEnv(databaseUrl: string, o: { hubEnv?: Record<string, string> } = {}): Promise<WebEnv> {
  const port = await freePort();
  const issuer = await startTestIssuer({ clientIds: [WEB_CLIENT_ID] });
  const hub = await startHub(
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      FM_OIDC_ISSUER: issuer.issuer,
      FM_WEB_CLIENT_ID: WEB_CLIENT_ID,
      FM_OIDC_SCOPE_MAPPING: JSON.stringify({
        emailDomains: { "example.com": ["fleet.read"] },
        groups: { "fleet-operators": ["fleet.operate"], "fleet-admins": ["fleet.admin"] },
      }),
      ...o.hubEnv,
    },
    60_000,
    { keepLogs: "errors" },
  );
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"] });
  let token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const renew = setInterval(
    () => void clientToken(hub.url, "fleet-admin", ADMIN_SECRET).then((t) => (token = t)),
    5 * 60_000,
  );
  return {
    hub,
    issuer,
    browser,
    api: hubApi(
      () => hub.url,
      () => token,
    ),
    async loggedIn(user, path = "/ui/", options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
      const page = await context.newPage();
      issuer.setUser(user);
      await logIn(page, hub.url, path);
      return { context, page };
    },
    async openShared(context, url) {
      const page = await context.newPage();
      await page.goto(url);
      return page;
    },
    async pressReload(page) {
      await page.reload();
    },
    async stop() {
      clearInterval(renew);
      await browser.close();
      await hub.stop();
      await issuer.close();
    },
  };
}
