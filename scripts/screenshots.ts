/**
 * `npm run screenshots`: docs/screenshots/*.png, one per view of the web UI, taken in Chromium
 * at 1280x800 (and the devices view at a phone's width) against a hub with the demo inventory,
 * a satellite that has sent a heartbeat, a cordoned device and a running job.
 * Needs what the browser tests need: PostgreSQL (TEST_DATABASE_URL or 127.0.0.1:5432) and
 * Chromium (scripts/setup.sh installs it).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { DeviceBriefList, Job } from "@fm/domain";
import { createTestDatabase } from "@fm/test-support/postgres";
import { REPO_ROOT, bearer, clientToken } from "@fm/test-support/process";
import { ensureWebBuilt } from "./build-web.ts";
import { USERS, seedDemo, startWebEnv } from "../test/web-env.ts";

const OUT = join(REPO_ROOT, "docs/screenshots");

await ensureWebBuilt();
const db = await createTestDatabase();
try {
  await seedDemo(db.url, 150);
  const env = await startWebEnv(db.url);
  try {
    const site = (await env.api<{ items: { id: string }[] }>("/api/v1/sites?slug=keflavik")).body.items[0]!;
    const sat = await env.api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites",
      { method: "POST", body: { name: "sys1-ice2", siteIds: [site.id], environment: "prod" } },
    );
    const agent = async (kind: string) => {
      const s = sat.body.secrets.find((x) => x.agent === kind)!;
      return clientToken(env.hub.url, s.clientId, s.clientSecret);
    };
    const post = async (token: string, path: string, body: object) => {
      const res = await fetch(`${env.hub.url}${path}`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    };
    await post(await agent("openstack"), "/api/v1/satellites/sys1-ice2/agents/openstack/heartbeat", {
      reflectors: { "ironic-overcloud": 12, "ironic-undercloud": 14 },
    });
    const devices = (await env.api<DeviceBriefList>("/api/v1/devices?site=keflavik&status=active&limit=3&brief=true"))
      .body.items;
    await env.api(`/api/v1/devices/${devices[0]!.id}`, {
      method: "PATCH",
      body: { cordoned: true, cordonReason: "GPU 3 XID 79, RMA opened" },
    });
    const job = await env.api<Job>("/api/v1/jobs", {
      method: "POST",
      body: { kind: "BURN_IN", deviceIds: [devices[1]!.id, devices[2]!.id], params: { durationMinutes: 120 } },
    });
    const workflow = await agent("workflow");
    await post(workflow, `/api/v1/jobs/${job.body.id}/report`, { status: "SUBMITTED", workflowId: "burn-in-demo" });
    await post(workflow, `/api/v1/jobs/${job.body.id}/report`, {
      status: "RUNNING",
      progress: 0.45,
      steps: [
        { name: "drain", status: "SUCCEEDED" },
        { name: "burn-in", status: "RUNNING", progress: 0.4, message: "GPU stress 48 of 120 min" },
        { name: "collect results", status: "PENDING" },
      ],
    });

    await mkdir(OUT, { recursive: true });
    const { context, page } = await env.loggedIn(USERS.admin);
    const shots: [string, string][] = [
      ["overview", "/ui/"],
      // The default columns: the cordon's reason, the last burn-in, Ironic's failure reason.
      ["devices", "/ui/devices?site=keflavik&sort=name"],
      ["device", `/ui/devices/${devices[0]!.id}`],
      ["jobs", "/ui/jobs"],
      ["job", `/ui/jobs/${job.body.id}`],
      ["job-create", "/ui/jobs/new?kind=BURN_IN"],
      ["satellites", "/ui/satellites"],
      ["discrepancies", "/ui/discrepancies"],
      ["audit", "/ui/audit"],
    ];
    for (const [name, path] of shots) {
      // Each view as its URL opens it: the session cookie keeps the person logged in.
      await page.goto(`${env.hub.url}${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await page.locator('p[aria-busy="true"]').first().waitFor({ state: "detached" });
      await page.waitForLoadState("networkidle");
      await page.screenshot({ path: join(OUT, `${name}.png`) });
      console.log(`docs/screenshots/${name}.png`);
    }
    await context.close();
    const narrow = await env.loggedIn(USERS.reader, "/ui/devices?site=stavanger", {
      viewport: { width: 390, height: 800 },
    });
    await narrow.page.waitForLoadState("networkidle");
    await narrow.page.screenshot({ path: join(OUT, "devices-narrow.png") });
    console.log("docs/screenshots/devices-narrow.png");
    await narrow.context.close();
    const login = await env.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await login.goto(`${env.hub.url}/ui/`);
    await login.getByRole("button", { name: "Log in" }).waitFor();
    await login.screenshot({ path: join(OUT, "login.png") });
    console.log("docs/screenshots/login.png");
  } finally {
    await env.stop();
  }
} finally {
  await db.drop();
}
