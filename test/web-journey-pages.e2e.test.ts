/**
 * An operator's way through the fleet's state, as a person makes it (logged in on the overview,
 * then only clicking and typing): from a discrepancy count on the overview to the discrepancies
 * view filtered to it, a filter changed, a device opened from it and cordoned, the audit log
 * naming the device and the person, the satellites view showing a silent site as silent and a
 * reporting one as reporting, and the overview refreshing by itself.
 *
 * The satellites' agents are played over HTTP with their own tokens (SLURM pushes). The hub runs
 * with a 20 s site silence window (FM_SITE_SILENCE_AFTER_S) so a site can go silent within the test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import type { DeviceBriefList, Site, SiteList } from "@fm/domain";
import { clientToken } from "@fm/test-support/process";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { USERS, seedDemo, startWebEnv, type WebEnv } from "./web-env.ts";

const SILENCE_S = 20;
/** The UI's LIVE_REFRESH_MS (apps/web/src/live.tsx). */
const LIVE_REFRESH_MS = 10_000;

let db: TestDatabase;
let env: WebEnv;
/** The SLURM agents' tokens of the two demo sites, and the sites' ids. */
const slurm: Record<"keflavik" | "stavanger", { siteId: string; token: string }> = {} as never;
let target: { id: string; name: string };

/** A SLURM push for the site, observed now: `drained` hand-drained, and nodes matching no device. */
async function push(site: keyof typeof slurm, drained: string[], ghosts: string[] = []): Promise<void> {
  const items = [
    ...drained.map((name) => ({ name, state: "IDLE", flags: ["DRAIN"], reason: "bad dimm", partitions: ["gpu"] })),
    ...ghosts.map((name) => ({ name, state: "IDLE", flags: [], reason: null, partitions: ["gpu"] })),
  ];
  const res = await fetch(`${env.hub.url}/api/v1/sites/${slurm[site].siteId}/reflections/slurm`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${slurm[site].token}` },
    body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items }),
  });
  expect(res.status, await res.text()).toBe(200);
}

beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  await seedDemo(db.url, 5);
  env = await startWebEnv(db.url, { hubEnv: { FM_SITE_SILENCE_AFTER_S: String(SILENCE_S) } });
  const sites = (await env.api<SiteList>("/api/v1/sites?limit=10")).body.items;
  for (const slug of ["keflavik", "stavanger"] as const) {
    const siteId = sites.find((s) => s.slug === slug)!.id;
    const sat = await env.api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "/api/v1/satellites",
      { method: "POST", body: { name: `sat-${slug}`, siteIds: [siteId], environment: "prod" } },
    );
    expect(sat.status).toBe(201);
    const s = sat.body.secrets.find((x) => x.agent === "slurm")!;
    slurm[slug] = { siteId, token: await clientToken(env.hub.url, s.clientId, s.clientSecret) };
  }
  const list = await env.api<DeviceBriefList>("/api/v1/devices?site=keflavik&cordoned=false&limit=1&brief=true");
  target = list.body.items[0]!;
  // Keflavik: one device drained by hand (the hub has it uncordoned) and one SLURM node no device matches.
  await push("keflavik", [target.name], ["kef-ghost-1"]);
  // Stavanger reports once and then goes quiet.
  await push("stavanger", []);
}, 180_000);
afterAll(async () => {
  await env?.stop();
  await db?.drop();
}, 60_000);

const site = async (slug: string) => (await env.api<SiteList>(`/api/v1/sites?slug=${slug}`)).body.items[0] as Site;

describe("the fleet's state, page by page", { timeout: 180_000 }, () => {
  it("overview count → filtered discrepancies → a filter changed → the device, cordoned → the audit log names it → satellites show a silent site → the overview refreshes by itself", async () => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/");
    const nav = page.getByRole("navigation", { name: "Main" });
    await page.getByRole("heading", { level: 1, name: /^Fleet overview$/ }).waitFor();

    /** Keflavik's row of the overview's sites table. */
    const keflavikRow = page
      .getByRole("region", { name: "Sites and their sources" })
      .getByRole("row")
      .filter({ has: page.getByRole("rowheader", { name: "Keflavik (ICE2)" }) });
    // The overview's count of keflavik's hand drains opens the discrepancies view filtered to it.
    await keflavikRow.getByRole("link", { name: "slurm_drained_externally: 1", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /^Discrepancies$/ }).waitFor();
    const url = new URL(page.url());
    expect(url.pathname).toBe("/ui/discrepancies");
    expect(url.searchParams.get("site")).toBe("keflavik");
    expect(url.searchParams.get("kind")).toBe("slurm_drained_externally");
    const table = page.getByRole("region", { name: "Discrepancies" });
    await page.getByRole("status").getByText("1 discrepancies").waitFor();
    await expect(table.getByRole("row").count()).resolves.toBe(2);
    await table.getByRole("link", { name: target.name, exact: true }).waitFor();
    await expect(table.textContent()).resolves.toContain("slurm.reason: bad dimm");

    // One more kind: the SLURM node that matches no device joins, with no device link.
    await page.getByRole("checkbox", { name: "slurm_node_unmatched" }).check();
    await page.getByRole("status").getByText("2 discrepancies").waitFor();
    expect(new URL(page.url()).searchParams.get("kind")).toBe("slurm_drained_externally,slurm_node_unmatched");
    await expect(table.getByRole("cell", { name: "kef-ghost-1 (no device)", exact: true }).count()).resolves.toBe(1);
    await expect(table.getByRole("link", { name: "kef-ghost-1" }).count()).resolves.toBe(0);

    // The device, opened from the list, cordoned by the person.
    await table.getByRole("link", { name: target.name, exact: true }).click();
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain(target.name);
    await page.getByLabel("Reason").fill("bad dimm, ticket OPS-31");
    await page.getByRole("button", { name: "Cordon", exact: true }).click();
    await page.getByText("Cordoned by person:ada@example.com").waitFor();

    // The audit log names the device (a link to its page) and the person by email, not by ids.
    await nav.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /^Audit log$/ }).waitFor();
    const cordon = page
      .getByRole("region", { name: "Audit entries" })
      .getByRole("row")
      .filter({ hasText: "device.update" })
      .filter({ hasText: "ada@example.com" })
      .first();
    await cordon.waitFor();
    await expect(cordon.getByRole("link", { name: target.name, exact: true }).getAttribute("href")).resolves.toBe(
      `/ui/devices/${target.id}`,
    );
    await expect(cordon.textContent()).resolves.toContain("(person)");

    // Stavanger has not pushed since the start: once the hub calls it silent, keflavik reports anew.
    const quietBy = Date.now() + (SILENCE_S + 30) * 1000;
    while ((await site("stavanger")).conditions[0]!.status !== "False") {
      expect(Date.now(), "stavanger never went silent").toBeLessThan(quietBy);
      await new Promise((r) => setTimeout(r, 1000));
    }
    await push("keflavik", [], ["kef-ghost-1"]);
    await nav.getByRole("link", { name: "Satellites", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /^Satellites$/ }).waitFor();
    const stavanger = page.getByTestId("site-state-stavanger");
    // The view first shows the sites as the overview last loaded them (stavanger still reporting)
    // and refetches on opening: by that answer, well within one refresh, stavanger reads silent.
    await stavanger.getByText(/^slurm silent since .+ \(\d+ s ago\)$/).waitFor({ timeout: 5000 });
    await expect(stavanger.textContent()).resolves.toMatch(/^silent slurm silent since .+ \(\d+ s ago\)$/);
    await expect(page.getByTestId("site-state-keflavik").textContent()).resolves.toBe("reporting");

    // The overview refreshes by itself: a new unmatched node appears in keflavik's count without a click.
    await nav.getByRole("link", { name: "Overview", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /^Fleet overview$/ }).waitFor();
    const unmatched = keflavikRow.getByRole("link", { name: /^slurm_node_unmatched: \d+$/ });
    await expect(unmatched.textContent()).resolves.toBe("slurm_node_unmatched: 1");
    const updated = page.getByTestId("updated");
    await updated.getByText(/^Updated [0-2] s ago$/).waitFor();
    await push("keflavik", [], ["kef-ghost-1", "kef-ghost-2"]);
    // Not at once: the page shows what it loaded until its next refresh …
    await expect(unmatched.textContent()).resolves.toBe("slurm_node_unmatched: 1");
    await updated.getByText(/^Updated [3-9] s ago$/).waitFor();
    // … and by LIVE_REFRESH_MS (and a little), the new count, the "updated" text back near zero.
    await keflavikRow
      .getByRole("link", { name: "slurm_node_unmatched: 2", exact: true })
      .waitFor({ timeout: LIVE_REFRESH_MS + 5000 });
    await updated.getByText(/^Updated [0-2] s ago$/).waitFor({ timeout: 3000 });
    await context.close();
  });
});
