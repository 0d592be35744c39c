/**
 * The operators' web UI in a real browser (Debian's Chromium through playwright-core) against a
 * real hub process with the demo inventory, people logging in through a local OIDC issuer
 * (authorization code with PKCE), and a job's progress reported by a satellite agent's token.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import type { Page } from "playwright-core";
import type { Device, DeviceBriefList, Job } from "@fm/domain";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { bearer, clientToken } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import { USERS, seedDemo, startWebEnv, type WebEnv } from "./web-env.ts";

const DEVICES_PER_SITE = 60;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let db: TestDatabase;
let env: WebEnv;
beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  await seedDemo(db.url, DEVICES_PER_SITE);
  env = await startWebEnv(db.url);
}, 180_000);
afterAll(async () => {
  await env?.stop();
  await db?.drop();
}, 60_000);

/** Content Security Policy violations the page reported (Chromium logs each to the console). */
function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

interface SatelliteCreated {
  secrets: { agent: string; clientId: string; clientSecret: string }[];
}

const countText = (page: Page) => page.getByTestId("device-count").textContent();

describe("the web UI", { timeout: 120_000 }, () => {
  it("logs a person in through the hub with PKCE, keeps every token out of the page, and logs out", async () => {
    const { context, page } = await env.loggedIn(USERS.operator);
    await expect(page.getByTestId("who").textContent()).resolves.toContain("ada@example.com (operator)");
    const code = env.issuer.tokenRequests.find((r) => r.form.grant_type === "authorization_code")!;
    expect(code.form).toMatchObject({ client_id: "fleet-web", redirect_uri: `${env.hub.url}/ui/callback` });
    expect(code.form.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    // The hub holds the tokens: nothing in either storage, and one cookie no page script can read.
    const stored = await page.evaluate("JSON.stringify({ ...localStorage, ...sessionStorage })");
    expect(stored).toBe("{}");
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly])).toEqual([["__Host-fm-session", true]]);
    await expect(page.evaluate("document.cookie")).resolves.toBe("");
    // Nor in the address, the document or any request the page sends: its API calls ride on
    // the cookie, with no bearer token a script could have read.
    expect(new URL(page.url()).search).not.toMatch(/code=|token/);
    const sent: Record<string, string>[] = [];
    page.on("request", (r) => sent.push(r.headers()));
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    await page.getByRole("table").waitFor();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((h) => "authorization" in h)).toEqual([]);
    expect(await page.content()).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\./);
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });

  it("serves bundles that do not point browsers at their source maps", async () => {
    const index = await (await fetch(`${env.hub.url}/ui/`)).text();
    const scripts = [...index.matchAll(/src="(\/ui\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts)
      await expect((await fetch(`${env.hub.url}${src}`)).text()).resolves.not.toMatch(/\/\/# sourceMappingURL=\S+\s*$/);
  });

  it("filters devices on the hub, keeps the filters in a URL another person can open", async () => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/devices");
    const violations = cspViolations(page);
    const all = await env.api<DeviceBriefList>("/api/v1/devices?limit=1&brief=true");
    await expect(countText(page)).resolves.toContain(`${all.body.count} devices`);

    await page.getByRole("combobox", { name: /^Site/ }).selectOption("keflavik");
    await page.getByRole("group", { name: "Operational status" }).getByRole("checkbox", { name: "AVAILABLE" }).check();
    await page.getByLabel("Name contains").fill("gpu-node");
    await page.getByRole("button", { name: "Search" }).click();
    const expected = await env.api<DeviceBriefList>(
      "/api/v1/devices?site=keflavik&operationalStatus=AVAILABLE&name=gpu-node&limit=100&brief=true",
    );
    expect(expected.body.count).toBeGreaterThan(0);
    expect(expected.body.count).toBeLessThan(DEVICES_PER_SITE);
    await eventually(async () =>
      expect(await countText(page)).toContain(`${expected.body.count} device${expected.body.count === 1 ? "" : "s"}`),
    );
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({
      site: "keflavik",
      operationalStatus: "AVAILABLE",
      name: "gpu-node",
    });
    const names = await page.locator("table.devices tbody tr td a[href^='/ui/devices/']").allTextContents();
    expect(names).toEqual(expected.body.items.map((d) => d.name));

    // Column choice is part of the URL too.
    await page.getByRole("group", { name: "Columns" }).getByRole("checkbox", { name: "Failure reason" }).uncheck();
    await eventually(async () => expect(new URL(page.url()).searchParams.get("cols")).not.toContain("failureReason"));
    await expect(page.getByRole("columnheader", { name: "Failure reason" }).count()).resolves.toBe(0);

    // Someone else opens the shared link: after their login they see the same list.
    const shared = await env.loggedIn(USERS.reader, `${url.pathname}${new URL(page.url()).search}`);
    await eventually(async () => expect(await countText(shared.page)).toContain(`${expected.body.count} device`));
    expect(await shared.page.getByRole("combobox", { name: /^Site/ }).inputValue()).toBe("keflavik");
    await expect(shared.page.getByRole("columnheader", { name: "Failure reason" }).count()).resolves.toBe(0);
    expect(violations).toEqual([]);
    await shared.context.close();
    await context.close();
  });

  it("sorts devices on the hub from a column header, by mouse and keyboard; the URL holds the sort through a reload", async () => {
    const { context, page } = await env.loggedIn(USERS.reader, "/ui/devices");
    const names = () => page.locator("table.devices tbody tr td a[href^='/ui/devices/']").allTextContents();
    const header = (name: RegExp) => page.getByRole("columnheader", { name });
    const apiNames = async (qs: string) =>
      (await env.api<DeviceBriefList>(`/api/v1/devices?${qs}&limit=100&brief=true`)).body;
    await expect(header(/^Name/).getAttribute("aria-sort")).resolves.toBe("none");

    await header(/^Name/).getByRole("button").click();
    const ascending = await apiNames("sort=name");
    await eventually(async () => expect(await names()).toEqual(ascending.items.map((d) => d.name)));
    expect(new URL(page.url()).searchParams.get("sort")).toBe("name");
    await expect(header(/^Name/).getAttribute("aria-sort")).resolves.toBe("ascending");
    expect(ascending.items.map((d) => d.name)).not.toEqual((await apiNames("")).items.map((d) => d.name));

    // Keyboard: Enter on the focused header button turns it descending.
    await header(/^Name/).getByRole("button").focus();
    await page.keyboard.press("Enter");
    const descending = await apiNames("sort=-name");
    await eventually(async () => expect(await names()).toEqual(descending.items.map((d) => d.name)));
    expect(new URL(page.url()).searchParams.get("sort")).toBe("-name");
    await expect(header(/^Name/).getAttribute("aria-sort")).resolves.toBe("descending");

    // The next page is the hub's next page in that order.
    await page.getByRole("button", { name: "Next page" }).click();
    const second = await apiNames(`sort=-name&cursor=${descending.nextCursor}`);
    await eventually(async () => expect(await names()).toEqual(second.items.map((d) => d.name)));

    // A reload shows the same sorted page, still logged in: the URL holds sort and cursor.
    await page.reload();
    await page.getByRole("button", { name: "Log out" }).waitFor();
    await eventually(async () => expect(await names()).toEqual(second.items.map((d) => d.name)));
    await expect(header(/^Name/).getAttribute("aria-sort")).resolves.toBe("descending");

    // Space on another column's header sorts by it, from the first page.
    await header(/^Operational status/)
      .getByRole("button")
      .focus();
    await page.keyboard.press("Space");
    const byStatus = await apiNames("sort=operationalStatus");
    await eventually(async () => expect(await names()).toEqual(byStatus.items.map((d) => d.name)));
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ sort: "operationalStatus" });
    await expect(header(/^Name/).getAttribute("aria-sort")).resolves.toBe("none");
    await context.close();
  });

  it("opens a device and cordons it with a reason; a change made meanwhile is a clear 412, nothing overwritten", async () => {
    const list = await env.api<DeviceBriefList>("/api/v1/devices?site=stavanger&cordoned=false&limit=1&brief=true");
    const target = list.body.items[0]!;
    const { context, page } = await env.loggedIn(USERS.operator, `/ui/devices?name=${target.name}`);
    await page.getByRole("link", { name: target.name, exact: true }).click();
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    await expect(page.getByRole("columnheader", { name: "Ironic" }).count()).resolves.toBe(1);

    await page.getByLabel("Reason").fill("fan noise, ticket OPS-1");
    await page.getByRole("button", { name: "Cordon", exact: true }).click();
    await page.getByText("Cordoned by person:ada@example.com").waitFor();
    const after = (await env.api<Device>(`/api/v1/devices/${target.id}`)).body;
    expect(after).toMatchObject({
      cordoned: true,
      cordonReason: "fan noise, ticket OPS-1",
      cordonedBy: "person:ada@example.com",
    });

    // Someone else writes the device after the page read it: the uncordon carries a stale If-Match.
    const patched = await env.api(`/api/v1/devices/${target.id}`, {
      method: "PATCH",
      body: { notes: "checked by night shift" },
    });
    expect(patched.status).toBe(200);
    await page.getByRole("button", { name: "Uncordon" }).click();
    // Asked first, naming the reason the uncordon removes.
    const ask = page.getByRole("dialog", { name: `Uncordon ${target.name}?` });
    await expect(ask.textContent()).resolves.toContain("“fan noise, ticket OPS-1” (by person:ada@example.com");
    await ask.getByRole("button", { name: "Uncordon" }).click();
    await page.getByText("This device changed since this page loaded it").waitFor();
    expect((await env.api<Device>(`/api/v1/devices/${target.id}`)).body.cordoned).toBe(true);
    await page.getByRole("button", { name: "Reload the device" }).click();
    await page.getByText("checked by night shift").waitFor();
    // Declined: nothing changes.
    await page.getByRole("button", { name: "Uncordon" }).click();
    await ask.getByRole("button", { name: "Keep as it is" }).click();
    await ask.waitFor({ state: "detached" });
    expect((await env.api<Device>(`/api/v1/devices/${target.id}`)).body.cordoned).toBe(true);
    await page.getByRole("button", { name: "Uncordon" }).click();
    await ask.getByRole("button", { name: "Uncordon" }).click();
    await page.getByText("Not cordoned.").waitFor();
    expect((await env.api<Device>(`/api/v1/devices/${target.id}`)).body.cordoned).toBe(false);
    await context.close();
  });

  it("creates a job with parameters checked by the kind's schema, and shows its progress as an agent reports it", async () => {
    const site = (await env.api<{ items: { id: string; slug: string }[] }>("/api/v1/sites?slug=keflavik")).body
      .items[0]!;
    const sat = await env.api<SatelliteCreated>("/api/v1/satellites", {
      method: "POST",
      body: { name: "web-e2e", siteIds: [site.id], environment: "dev" },
    });
    expect(sat.status).toBe(201);
    const wf = sat.body.secrets.find((s) => s.agent === "workflow")!;
    const agentToken = await clientToken(env.hub.url, wf.clientId, wf.clientSecret);
    const device = (
      await env.api<DeviceBriefList>("/api/v1/devices?site=keflavik&status=active&cordoned=false&limit=1&brief=true")
    ).body.items[0]!;

    const { context, page } = await env.loggedIn(USERS.operator, "/ui/jobs");
    await page.getByRole("link", { name: "Create a job" }).click();
    await page.getByLabel("Kind").selectOption("BURN_IN");
    // The picker: part of the name, then the device from the matches.
    await page.getByLabel("Find devices by name").fill(device.name);
    await page.getByRole("button", { name: `Add ${device.name}`, exact: true }).click();
    await page.getByRole("list", { name: "Chosen devices" }).getByText(device.name).waitFor();
    await page.getByLabel(/^durationMinutes/).fill("ten");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.getByText(/durationMinutes: .*number/i).waitFor();
    expect((await env.api<{ count: number }>(`/api/v1/jobs?device=${device.id}`)).body.count).toBe(0);

    await page.getByLabel(/^durationMinutes/).fill("30");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/ui\/jobs\/[0-9a-f-]{36}$/);
    const jobId = page.url().split("/").pop()!;
    const job = (await env.api<Job>(`/api/v1/jobs/${jobId}`)).body;
    expect(job).toMatchObject({
      kind: "BURN_IN",
      params: { durationMinutes: 30 },
      createdBy: "person:ada@example.com",
    });
    await page.getByTestId("job-status").getByText("PENDING").waitFor();
    await page.getByRole("link", { name: new RegExp(`^${device.name} `) }).waitFor();

    const report = (body: object) =>
      fetch(`${env.hub.url}/api/v1/jobs/${jobId}/report`, {
        method: "POST",
        headers: { ...bearer(agentToken), "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => expect(r.status).toBe(200));
    await report({ status: "SUBMITTED", workflowId: `burn-in-${jobId}` });
    await report({
      status: "RUNNING",
      progress: 0.5,
      steps: [
        { name: "drain", status: "SUCCEEDED" },
        { name: "burn-in", status: "RUNNING", progress: 0.4, message: "GPU stress 12 of 30 min" },
      ],
    });
    // No reload: the page polls while the job is active.
    await page.getByTestId("job-status").getByText("RUNNING").waitFor();
    await page.getByText("GPU stress 12 of 30 min").waitFor();
    await expect(page.getByRole("progressbar", { name: "Job progress" }).getAttribute("value")).resolves.toBe("0.5");
    // The burn-in's results, per device and test, and where its logs are.
    await report({
      burnIn: [
        {
          deviceId: device.id,
          status: "PASSED",
          tests: [
            {
              test: "gpu-fryer",
              passed: true,
              exitCode: 0,
              image: "/vast/enroot-cache/gpu-fryer.sqsh",
              architecture: "x86_64",
              figures: { gpus: [{ index: 0, tflops: 51.2, temperatureMaxC: 55 }], xids: [], reasons: [] },
              artifacts: [{ name: "gpu-fryer.log", url: "https://artifacts.example.com/gpu-fryer.log", bytes: 1200 }],
            },
          ],
        },
      ],
      logsUrl: "https://logs.example.com/explore?job=web-e2e",
    });
    await report({
      status: "SUCCEEDED",
      progress: 1,
      steps: [
        { name: "drain", status: "SUCCEEDED" },
        { name: "burn-in", status: "SUCCEEDED", progress: 1 },
      ],
    });
    await page.getByTestId("job-status").getByText("SUCCEEDED").waitFor();
    await expect(page.getByRole("button", { name: "Cancel job" }).count()).resolves.toBe(0);

    const results = page.getByRole("region", { name: new RegExp(`^Burn-in tests of ${device.name} `) });
    const row = page.getByRole("row", { name: /gpu-fryer/ });
    await row.waitFor();
    await expect(row.textContent()).resolves.toMatch(/PASSED.*0.*GPU 0, 51\.2 TFLOPS, max 55 °C/);
    await expect(row.getByRole("link", { name: "gpu-fryer.log (1,200 bytes)" }).getAttribute("href")).resolves.toBe(
      "https://artifacts.example.com/gpu-fryer.log",
    );
    await expect(results.count()).resolves.toBe(1);
    await expect(page.getByRole("link", { name: /logs in the site/ }).getAttribute("href")).resolves.toBe(
      "https://logs.example.com/explore?job=web-e2e",
    );
    // The device shows its last burn-in and links to the job.
    await page
      .getByRole("link", { name: new RegExp(`^${device.name} `) })
      .first()
      .click();
    await expect(page.getByTestId("device-burn-in").textContent()).resolves.toContain("PASSED");
    await page.getByRole("link", { name: "see its job" }).click();
    await page.waitForURL(new RegExp(`/ui/jobs/${jobId}$`));
    await context.close();
  });

  it("cancels a job from its page only once the person confirms", async () => {
    const device = (
      await env.api<DeviceBriefList>("/api/v1/devices?site=stavanger&status=active&cordoned=false&limit=1&brief=true")
    ).body.items[0]!;
    const created = await env.api<Job>("/api/v1/jobs", {
      method: "POST",
      body: { kind: "REPAIR", deviceIds: [device.id], params: { ticket: "OPS-2" } },
    });
    expect(created.status).toBe(201);
    const { context, page } = await env.loggedIn(USERS.operator, `/ui/jobs/${created.body.id}`);
    await page.getByRole("button", { name: "Cancel job" }).click();
    const ask = page.getByRole("dialog", { name: /^Cancel / });
    await expect(ask.textContent()).resolves.toContain("REPAIR job on 1 device");
    await ask.getByRole("button", { name: "Keep as it is" }).click();
    await ask.waitFor({ state: "detached" });
    expect((await env.api<Job>(`/api/v1/jobs/${created.body.id}`)).body.status).toBe("PENDING");
    await page.getByRole("button", { name: "Cancel job" }).click();
    await ask.getByRole("button", { name: "Cancel job" }).click();
    await page.getByTestId("job-status").getByText("CANCELLED").waitFor();
    expect((await env.api<Job>(`/api/v1/jobs/${created.body.id}`)).body.status).toBe("CANCELLED");
    await context.close();
  });

  it("keeps a text parameter that looks like a number as text, lists the new job first, and opens the form for an unknown kind", async () => {
    const device = (
      await env.api<DeviceBriefList>("/api/v1/devices?site=stavanger&status=active&cordoned=false&limit=5&brief=true")
    ).body.items[3]!;
    // An earlier job on the device, ended, so the device's list has an older entry.
    const earlier = await env.api<Job>("/api/v1/jobs", {
      method: "POST",
      body: { kind: "REPAIR", deviceIds: [device.id], params: { ticket: "OPS-3" } },
    });
    expect(earlier.status).toBe(201);
    expect((await env.api(`/api/v1/jobs/${earlier.body.id}/cancel`, { method: "POST" })).status).toBe(200);
    // A link naming no kind opens the form (on BURN_IN), not a blank app.
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/jobs/new?kind=BOGUS");
    await page.getByRole("heading", { name: "Create a job" }).waitFor();
    await expect(page.getByLabel("Kind").inputValue()).resolves.toBe("BURN_IN");

    await page.getByLabel("Kind").selectOption("REPAIR");
    // The picker: part of the name, then the device from the matches.
    await page.getByLabel("Find devices by name").fill(device.name);
    await page.getByRole("button", { name: `Add ${device.name}`, exact: true }).click();
    await page.getByRole("list", { name: "Chosen devices" }).getByText(device.name).waitFor();
    await page.getByLabel(/^ticket/).fill("12345");
    await page.getByLabel(/^burnInMinutes/).fill("45");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/ui\/jobs\/[0-9a-f-]{36}$/);
    const job = (await env.api<Job>(`/api/v1/jobs/${page.url().split("/").pop()!}`)).body;
    expect(job).toMatchObject({ kind: "REPAIR", params: { ticket: "12345", burnInMinutes: 45 } });

    // Newest first: the job just made heads the jobs list and the device's jobs.
    expect((await env.api<{ count: number }>("/api/v1/jobs?limit=1")).body.count).toBeGreaterThan(1);
    await page.goto(`${env.hub.url}/ui/jobs`);
    await page.getByRole("table").waitFor();
    await expect(page.getByRole("row").nth(1).getByRole("link").textContent()).resolves.toBe(job.name);
    await page.goto(`${env.hub.url}/ui/devices/${device.id}`);
    await page.getByRole("heading", { name: "Jobs" }).waitFor();
    const deviceJobs = page.getByRole("region", { name: "Jobs" }).getByRole("link");
    await deviceJobs.first().waitFor();
    await expect(deviceJobs.first().textContent()).resolves.toBe(job.name);
    await env.api(`/api/v1/jobs/${job.id}/cancel`, { method: "POST" });
    await context.close();
  });

  it("shows a read-only person no control that would change anything, on every view including a job's page", async () => {
    const device = (
      await env.api<DeviceBriefList>("/api/v1/devices?site=stavanger&status=active&cordoned=false&limit=1&brief=true")
    ).body.items[0]!;
    const cordoned = (await env.api<DeviceBriefList>("/api/v1/devices?cordoned=true&limit=1&brief=true")).body
      .items[0]!;
    // An active job: its page offers an operator "Cancel job".
    const job = await env.api<Job>("/api/v1/jobs", {
      method: "POST",
      body: { kind: "REPAIR", deviceIds: [device.id], params: { ticket: "OPS-RO" } },
    });
    expect(job.status).toBe(201);
    const views = [
      "/ui/",
      "/ui/devices",
      `/ui/devices/${device.id}`,
      `/ui/devices/${cordoned.id}`,
      "/ui/jobs",
      `/ui/jobs/${job.body.id}`,
      "/ui/jobs/new",
      "/ui/satellites",
      "/ui/discrepancies",
      "/ui/audit",
    ];
    // Buttons a reader may press: navigation, filters, sorting, paging, logging out. Nothing else, on any view.
    const harmless = new Set(["Menu", "Log out", "Search", "First page", "Next page", "Last page", "Go", "Filter"]);
    const sortHeader = /^(Name|Serial|Operational status|Updated) [↕▲▼]$/;
    const mutating = async (page: Page) => {
      const buttons = (await page.getByRole("button").allTextContents()).map((t) => t.trim());
      const selection = await page.getByRole("checkbox", { name: /^Select / }).count();
      const links = await page.getByRole("link", { name: /^Create a job/ }).count();
      return [
        ...buttons.filter((b) => !harmless.has(b) && !sortHeader.test(b)),
        ...(selection ? ["select"] : []),
        ...(links ? ["Create a job"] : []),
      ];
    };
    const visit = async (page: Page, path: string) => {
      // The URL typed in: the session cookie keeps the person logged in on the new document.
      await page.goto(`${env.hub.url}${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await page.waitForLoadState("networkidle");
    };
    const reader = await env.loggedIn(USERS.reader);
    await expect(reader.page.getByTestId("who").textContent()).resolves.toContain("(read-only)");
    for (const path of views) {
      await visit(reader.page, path);
      expect(await mutating(reader.page), path).toEqual([]);
    }
    await reader.context.close();
    // The same views show an operator their controls: the check above sees what it looks for.
    const operator = await env.loggedIn(USERS.operator);
    for (const [path, control] of [
      [`/ui/jobs/${job.body.id}`, "Cancel job"],
      ["/ui/devices", "select"],
      [`/ui/devices/${cordoned.id}`, "Uncordon"],
      ["/ui/jobs", "Create a job"],
    ] as const) {
      await visit(operator.page, path);
      expect(await mutating(operator.page), path).toContain(control);
    }
    await operator.context.close();
    await env.api(`/api/v1/jobs/${job.body.id}/cancel`, { method: "POST" });
  });

  it("lets an admin rotate an agent's secret, shown once, and the new secret works", async () => {
    const site = (await env.api<{ items: { id: string }[] }>("/api/v1/sites?slug=stavanger")).body.items[0]!;
    const sat = await env.api("/api/v1/satellites", {
      method: "POST",
      body: { name: "web-rotate", siteIds: [site.id], environment: "dev" },
    });
    expect(sat.status).toBe(201);
    const { context, page } = await env.loggedIn(USERS.admin, "/ui/satellites");
    page.on("dialog", (d) => void d.accept());
    const row = page.getByRole("region", { name: "Agents of web-rotate" }).getByRole("row", { name: /^slurm/ });
    await row.getByRole("button", { name: "Rotate secret" }).click();
    const secret = (await page.getByTestId("new-secret").textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    await expect(clientToken(env.hub.url, "slurm-agent-web-rotate", secret)).resolves.toMatch(/^ey/);
    await page.getByRole("button", { name: "I have stored it" }).click();
    await expect(page.getByTestId("new-secret").count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);
    await context.close();
  });

  it("passes axe's accessibility check with no serious or critical violation, wide and narrow", async () => {
    // axe is injected as a script, which the UI's policy rightly refuses: this context bypasses it.
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 800 },
    ]) {
      const { context, page } = await env.loggedIn(USERS.admin, "/ui/", { bypassCSP: true, viewport });
      // Each view reached as a person reaches it: the main menu (behind "Menu" on a phone), a
      // device's link in the list, the jobs list's "Create a job".
      const menu = (entry: string) => async () => {
        if (viewport.width < 600) await page.getByRole("button", { name: "Menu" }).click();
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: entry, exact: true }).click();
      };
      const views: [path: string, go: () => Promise<void>][] = [
        ["/ui/", menu("Overview")],
        ["/ui/devices", menu("Devices")],
        ["/ui/devices/:id", () => page.getByRole("table").getByRole("link").first().click()],
        ["/ui/jobs", menu("Jobs")],
        ["/ui/jobs/new", () => page.getByRole("link", { name: "Create a job" }).click()],
        ["/ui/satellites", menu("Satellites")],
        ["/ui/discrepancies", menu("Discrepancies")],
        ["/ui/audit", menu("Audit log")],
      ];
      for (const [path, go] of views) {
        await go();
        await page.waitForURL(new RegExp(`${path.replace(":id", "[^/]+")}$`));
        await page.getByRole("heading", { level: 1 }).first().waitFor();
        await page.waitForLoadState("networkidle");
        await page.addScriptTag({ content: AXE });
        const violations = await page.evaluate<string[]>(`(async () => {
          const result = await axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"] } });
          return result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" ")).join(", "));
        })()`);
        expect(violations, `${path} at ${viewport.width}px`).toEqual([]);
      }
      await context.close();
    }
  });
});

describe("the API's documentation page (/docs)", { timeout: 120_000 }, () => {
  it("renders every operation under its policy with no violation, and another origin cannot frame it", async () => {
    const context = await env.browser.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${env.hub.url}/docs/`);
    // Swagger UI built the page from the hub's document: an operation, as a reader finds it (its method, path and summary).
    await page
      .getByRole("button", { name: /GET \/api\/v1\/devices\/? List devices/ })
      .first()
      .waitFor();
    expect(violations).toEqual([]);

    // A page of another origin (another port is another origin) that frames the docs.
    const other = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><title>elsewhere</title><iframe id="f" src="${env.hub.url}/docs/" width="800" height="600"></iframe>`,
      );
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", () => r()));
    try {
      const framed: string[] = [];
      page.on("console", (m) => framed.push(m.text()));
      const port = (other.address() as { port: number }).port;
      await page.goto(`http://localhost:${port}/`);
      await page.waitForLoadState("load");
      await eventually(async () => {
        if (!framed.some((t) => /frame-ancestors/.test(t))) throw new Error("no refusal yet");
      }, 10_000);
      const frame = page.frames().find((f) => f !== page.mainFrame())!;
      await expect(frame.locator("#swagger-ui").count()).resolves.toBe(0);
    } finally {
      await new Promise((r) => other.close(r));
      await context.close();
    }
  });
});
