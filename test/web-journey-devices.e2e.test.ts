/**
 * The device list as an operator works it all day, logged in on a first page and then only
 * clicking and typing (the lint rule for test/web-journey-*.e2e.test.ts refuses any other way
 * in): filter by two statuses and by burn-in, read the reasons, go to the last page, select
 * devices and cordon them, re-cordon one (asked first), uncordon them (shown the reasons), create
 * a job from the selection, watch it, cancel it (confirmed), and see the list refresh by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import pg from "pg";
import type { Page } from "playwright-core";
import type { Device, DeviceBrief, DeviceBriefList, Job, JobList } from "@fm/domain";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { eventually } from "@fm/test-support/wait";
import { USERS, seedDemo, startWebEnv, type WebEnv } from "./web-env.ts";

/** Two sites of 60: 120 devices, two pages of 100. */
const DEVICES_PER_SITE = 60;

let db: TestDatabase;
let env: WebEnv;
/** A healthy-looking (AVAILABLE) device whose last burn-in failed. */
let burntOut: DeviceBrief;
beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  await seedDemo(db.url, DEVICES_PER_SITE);
  env = await startWebEnv(db.url);
  burntOut = (await env.api<DeviceBriefList>("/api/v1/devices?operationalStatus=AVAILABLE&limit=1&brief=true")).body
    .items[0]!;
  // A burn-in's result arrives through a job's report; here it is written as that report leaves it.
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(
    `UPDATE devices SET burn_in_status = 'FAILED', burn_in_job_id = '00000000-0000-7000-8000-000000000031',
            burn_in_at = now() WHERE id = $1`,
    [burntOut.id],
  );
  await client.end();
}, 180_000);
afterAll(async () => {
  await env?.stop();
  await db?.drop();
}, 60_000);

const rows = (page: Page) => page.locator("table.devices tbody tr");
const countText = (page: Page) => page.getByTestId("device-count").textContent();
const device = async (id: string) => (await env.api<Device>(`/api/v1/devices/${id}`)).body;

describe("the device list as an operator works it", { timeout: 180_000 }, () => {
  it("filters, reads reasons, pages to the end, acts on a selection, creates and cancels a job, and refreshes by itself", async () => {
    const { context, page } = await env.loggedIn(USERS.operator, "/ui/devices");
    await page.getByTestId("device-count").waitFor();
    await expect(countText(page)).resolves.toBe("120 devices, page 1 of 2");

    // Two statuses at once: only devices of either, and why each failed.
    const statuses = page.getByRole("group", { name: "Operational status" });
    const impaired = (
      await env.api<DeviceBriefList>("/api/v1/devices?operationalStatus=IMPAIRED,FAILED&limit=1000&brief=true")
    ).body;
    expect(new Set(impaired.items.map((d) => d.operationalStatus))).toEqual(new Set(["IMPAIRED", "FAILED"]));
    await statuses.getByRole("checkbox", { name: "IMPAIRED" }).check();
    await statuses.getByRole("checkbox", { name: "FAILED" }).check();
    await eventually(async () => expect(await countText(page)).toBe(`${impaired.count} devices`));
    await expect(rows(page).count()).resolves.toBe(impaired.count);
    const badges = await page.locator("table.devices tbody .badge").allTextContents();
    expect(badges.filter((b) => /^[A-Z]+$/.test(b)).every((b) => b === "IMPAIRED" || b === "FAILED")).toBe(true);
    await page.getByText("Clean step erase_devices failed: disk /dev/nvme3n1 timed out").first().waitFor();
    // The demo's cordoned devices say why, by whom.
    await statuses.getByRole("checkbox", { name: "IMPAIRED" }).uncheck();
    await statuses.getByRole("checkbox", { name: "FAILED" }).uncheck();
    await page.getByRole("combobox", { name: /^Cordoned/ }).selectOption("true");
    await page.getByText("RMA: GPU 4 Xid 79 (fallen off the bus)").first().waitFor();
    await page.getByRole("combobox", { name: /^Cordoned/ }).selectOption("");

    // Burn-in failed: the AVAILABLE device is shown as failed burn-in, not as a healthy one.
    await page.getByRole("combobox", { name: /^Last burn-in/ }).selectOption("failed");
    await eventually(async () => expect(await countText(page)).toBe("1 device"));
    const burnt = page.getByRole("row", { name: new RegExp(`^(Select )?${burntOut.name}\\b`) });
    await expect(burnt.textContent()).resolves.toContain("burn-in FAILED");
    await expect(burnt.textContent()).resolves.toContain("AVAILABLE");
    expect(new URL(page.url()).searchParams.get("burnIn")).toBe("failed");
    await page.getByRole("combobox", { name: /^Last burn-in/ }).selectOption("");
    await eventually(async () => expect(await countText(page)).toBe("120 devices, page 1 of 2"));

    // The last page, then back to the first.
    await page.getByRole("button", { name: "Last page" }).click();
    await eventually(async () => expect(await countText(page)).toBe("120 devices, page 2 of 2"));
    await eventually(async () => expect(await rows(page).count()).toBe(20));
    await expect(page.getByRole("button", { name: "Next page" }).isDisabled()).resolves.toBe(true);
    await page.getByRole("button", { name: "First page" }).click();
    await eventually(async () => expect(await countText(page)).toBe("120 devices, page 1 of 2"));

    // Two devices of one site, active and not cordoned, from the page shown.
    const first = (await env.api<DeviceBriefList>("/api/v1/devices?limit=100&brief=true")).body.items;
    const [a, b] = first.filter(
      (d) =>
        d.site.slug === first[0]!.site.slug &&
        !d.cordoned &&
        d.netboxStatus === "active" &&
        d.operationalStatus === "AVAILABLE",
    );
    await page.getByRole("checkbox", { name: `Select ${a!.name}`, exact: true }).check();
    await page.getByRole("checkbox", { name: `Select ${b!.name}`, exact: true }).check();
    await expect(page.getByTestId("selected-count").textContent()).resolves.toMatch(/^2 selected/);
    const bulk = page.getByRole("region", { name: "Selected devices" });
    await bulk.getByLabel("Cordon reason").fill("PDU swap, ticket OPS-77");
    await bulk.getByRole("button", { name: "Cordon selected", exact: true }).click();
    await eventually(async () => expect((await device(a!.id)).cordonReason).toBe("PDU swap, ticket OPS-77"));
    expect(await device(b!.id)).toMatchObject({ cordoned: true, cordonedBy: "person:ada@example.com" });
    await page
      .getByRole("row", { name: new RegExp(a!.name) })
      .getByText("PDU swap, ticket OPS-77")
      .waitFor();

    // Re-cordoning one asks before its reason is replaced; declining keeps it.
    await page.getByRole("checkbox", { name: `Select ${a!.name}`, exact: true }).check();
    await bulk.getByLabel("Cordon reason").fill("PDU swapped, burn-in next");
    await bulk.getByRole("button", { name: "Cordon selected", exact: true }).click();
    const replace = page.getByRole("dialog", { name: "Replace the cordon reason of 1 device?" });
    await expect(replace.textContent()).resolves.toContain(`${a!.name}: “PDU swap, ticket OPS-77”`);
    await replace.getByRole("button", { name: "Keep as it is" }).click();
    await replace.waitFor({ state: "detached" });
    expect((await device(a!.id)).cordonReason).toBe("PDU swap, ticket OPS-77");
    await bulk.getByRole("button", { name: "Cordon selected", exact: true }).click();
    await replace.getByRole("button", { name: "Replace the reasons" }).click();
    await eventually(async () => expect((await device(a!.id)).cordonReason).toBe("PDU swapped, burn-in next"));
    expect((await device(b!.id)).cordonReason).toBe("PDU swap, ticket OPS-77");

    // Uncordon both: the confirmation names the reasons it removes.
    await page
      .getByRole("row", { name: new RegExp(a!.name) })
      .getByText("PDU swapped, burn-in next")
      .waitFor();
    await page.getByRole("checkbox", { name: `Select ${a!.name}`, exact: true }).check();
    await page.getByRole("checkbox", { name: `Select ${b!.name}`, exact: true }).check();
    await bulk.getByRole("button", { name: "Uncordon selected" }).click();
    const uncordon = page.getByRole("dialog", { name: "Uncordon 2 devices?" });
    await expect(uncordon.textContent()).resolves.toContain("“PDU swapped, burn-in next”");
    await expect(uncordon.textContent()).resolves.toContain("“PDU swap, ticket OPS-77”");
    await uncordon.getByRole("button", { name: "Uncordon" }).click();
    await eventually(async () => expect((await device(a!.id)).cordoned).toBe(false));
    expect((await device(b!.id)).cordoned).toBe(false);

    // A job on the selection: the form holds both devices; watched, then cancelled once confirmed.
    await page.getByRole("checkbox", { name: `Select ${a!.name}`, exact: true }).check();
    await page.getByRole("checkbox", { name: `Select ${b!.name}`, exact: true }).check();
    await bulk.getByRole("button", { name: "Create a job on the selected" }).click();
    await page.getByRole("heading", { level: 1, name: "Create a job" }).waitFor();
    const chosen = page.getByRole("list", { name: "Chosen devices" });
    await expect(chosen.getByRole("listitem").allTextContents()).resolves.toEqual([`${a!.name} ×`, `${b!.name} ×`]);
    await page.getByLabel("Kind").selectOption("REPAIR");
    await page.getByLabel(/^ticket/).fill("OPS-77");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.getByTestId("job-status").getByText("PENDING").waitFor();
    const jobs = (await env.api<JobList>(`/api/v1/jobs?device=${a!.id}`)).body.items;
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect([...job.deviceIds].sort()).toEqual([a!.id, b!.id].sort());
    await page.getByRole("button", { name: "Cancel job" }).click();
    const cancel = page.getByRole("dialog", { name: `Cancel ${job.name}?` });
    await expect(cancel.textContent()).resolves.toContain("REPAIR job on 2 devices");
    await cancel.getByRole("button", { name: "Cancel job" }).click();
    await page.getByTestId("job-status").getByText("CANCELLED").waitFor();
    expect((await env.api<Job>(`/api/v1/jobs/${job.id}`)).body.status).toBe("CANCELLED");
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Jobs", exact: true }).click();
    await page
      .getByRole("row", { name: new RegExp(job.name) })
      .getByText("CANCELLED")
      .waitFor();

    // The list refreshes by itself: "updated" counts up, then a change made elsewhere appears
    // without a click and the age starts again.
    await nav.getByRole("link", { name: "Devices", exact: true }).click();
    const updated = page.getByTestId("updated");
    await updated.waitFor();
    await eventually(async () => expect(await updated.textContent()).toMatch(/^Updated [3-9] s ago/), 15_000);
    const patched = await env.api(`/api/v1/devices/${a!.id}`, {
      method: "PATCH",
      body: { cordoned: true, cordonReason: "cordoned from another tool" },
    });
    expect(patched.status).toBe(200);
    await page.getByText("cordoned from another tool").waitFor({ timeout: 20_000 });
    await expect(updated.textContent()).resolves.toMatch(/^Updated [0-2] s ago/);
    await context.close();
  });
});
