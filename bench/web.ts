/**
 * `npm run bench -- web`: the web UI in Chromium against a hub with 50,000 demo devices (25,000
 * per site), `BENCH_WEB_RUNS` (default 5) runs, alternating:
 *  - first render of the devices view: a person opens /ui/devices, logs in, and the hub sends
 *    the browser back; measured in the page from that document's start (the bundle loaded,
 *    whoami and the first page of 100 devices fetched) to React's commit of the 100 rows (the
 *    view's `fm:devices-rows` performance mark, read in the page: no Playwright polling in the
 *    figure; the browser's layout and paint of the table come after it); and the view's own part
 *    of it, from the view's first render (its `fm:devices-view` mark, after whoami) to the same
 *    commit: its request and its drawing;
 *  - baseline: the same page of 100 brief devices fetched bare by the same page as the same
 *    person (fetch and JSON.parse, the session cookie), the part the hub and the network account for;
 *  - the devices view as a person usually reaches it: the overview drawn, a click on Devices in
 *    the main menu, timed in the page from the click event's time stamp to the same commit;
 *  - the same for the devices view sorted on the hub within a site, and for the overview (every
 *    site x status count, one counts request), each with its request bare;
 *  - the bundle's JavaScript and CSS, raw and gzip-compressed.
 * Asserts nothing.
 */
import type { Page } from "playwright-core";
import { createTestDatabase } from "@fm/test-support/postgres";
import { bundleSize, ensureWebBuilt } from "../scripts/build-web.ts";
import { USERS, seedDemo, startWebEnv } from "../test/web-env.ts";
import { DEMO_DEVICES_PER_SITE, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const RUNS = knob("BENCH_WEB_RUNS", 5, 1);
const DEVICES_PER_SITE = DEMO_DEVICES_PER_SITE;
/** A sorted view within a site, the case an index on (site_id, field, id) serves. */
const SORTED = "site=keflavik&sort=-updatedAt";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => `min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}`;

export async function webBench(report: Report): Promise<void> {
  await ensureWebBuilt();
  const size = await bundleSize();
  report(
    "web: bundle JS+CSS gzip (level 9)",
    `${(size.gzip / 1024).toFixed(1)} KiB`,
    `${size.files} files, ${(size.raw / 1024).toFixed(0)} KiB raw`,
  );

  const db = await createTestDatabase();
  try {
    await seedDemo(db.url, DEVICES_PER_SITE);
    const env = await startWebEnv(db.url);
    try {
      const total = (await env.api<{ count: number }>("/api/v1/devices?limit=1&brief=true")).body.count;
      env.issuer.setUser(USERS.reader);
      const hundredRows = (page: Page) => page.locator("table.devices tbody tr").nth(99).waitFor({ timeout: 120_000 });
      const overviewDrawn = async (page: Page) => {
        await page.getByRole("rowheader").first().waitFor({ timeout: 120_000 });
        await page.locator('td.num:text-is("…")').first().waitFor({ state: "detached", timeout: 120_000 });
      };
      const devicesMenu = (page: Page) => page.getByRole("navigation").getByRole("link", { name: "Devices" }).click();
      /** One first render: times from the page's own clock (ms), NaN where a mark is not there. */
      type Render = { drawn: number; bare: number; view: number; request: number; drawing: number; clicked: number };
      /**
       * From the document the issuer's redirect loads to `drawn` (a locator, not a string
       * predicate: the UI's policy forbids eval); then the view's request bare, fetch and
       * JSON.parse in the same page, as the same person (the session cookie the UI's own calls carry).
       */
      const measure = async (
        path: string,
        drawn: (page: Page) => Promise<void>,
        request: string,
        /** A click the person makes once `path` is drawn (timed from the click event), before `drawn` again. */
        click?: (page: Page) => Promise<void>,
      ): Promise<Render> => {
        const context = await env.browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${env.hub.url}${path}`);
        await page.getByRole("button", { name: "Log in" }).click();
        if (click) {
          await overviewDrawn(page);
          // The click's own time stamp (the page's clock): the view is timed from the person's click.
          await page.evaluate(`addEventListener("click", (e) => { window.fmClickAt = e.timeStamp; }, true)`);
          await click(page);
        }
        await drawn(page);
        // Read in the page: the devices view's marks (its first render, React's commit of its rows;
        // no Playwright polling in the figure) and its request's resource timing (sent, answered),
        // so the view's figure splits into its request and its drawing.
        const t = await page.evaluate<{
          now: number;
          viewStart: number;
          rowsAt: number;
          sent: number;
          answered: number;
          clickAt: number;
        }>(`(() => {
          const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? Number.NaN;
          const r = performance.getEntriesByType("resource").find((e) => e.name.endsWith(${JSON.stringify(request)}));
          return {
            now: performance.now(),
            viewStart: mark("fm:devices-view"),
            rowsAt: mark("fm:devices-rows"),
            sent: r ? r.startTime : Number.NaN,
            answered: r ? r.responseEnd : Number.NaN,
            clickAt: window.fmClickAt ?? Number.NaN,
          };
        })()`);
        const bare = await page.evaluate<number>(`(async () => {
          const t0 = performance.now();
          const res = await fetch(${JSON.stringify(request)}, { headers: { "x-fm-csrf": "1" } });
          const body = await res.json();
          if (!res.ok || (body.items && body.items.length !== 100)) throw new Error("unexpected answer " + res.status);
          return performance.now() - t0;
        })()`);
        await context.close();
        const drawnAt = Number.isNaN(t.rowsAt) ? t.now : t.rowsAt;
        return {
          drawn: drawnAt,
          bare,
          view: drawnAt - t.viewStart,
          request: t.answered - t.sent,
          drawing: drawnAt - t.answered,
          clicked: drawnAt - t.clickAt,
        };
      };
      const devices: Render[] = [];
      const clicked: Render[] = [];
      const sorted: Render[] = [];
      const overview: Render[] = [];
      for (let i = 0; i < RUNS; i++) {
        devices.push(await measure("/ui/devices", hundredRows, "/api/v1/devices?limit=100&brief=true"));
        sorted.push(
          await measure(`/ui/devices?${SORTED}`, hundredRows, `/api/v1/devices?${SORTED}&limit=100&brief=true`),
        );
        clicked.push(await measure("/ui/", hundredRows, "/api/v1/devices?limit=100&brief=true", devicesMenu));
        overview.push(await measure("/ui/", overviewDrawn, "/api/v1/devices/counts?groupBy=site,operationalStatus"));
      }
      const row = (what: string, runs: Render[], of: keyof Render) => {
        const xs = runs.map((r) => r[of]);
        report(what, `${median(xs).toFixed(0)} ms`, spread(xs));
      };
      row(
        `web: devices view first render, ${total.toLocaleString()} devices (login return → 100 rows)`,
        devices,
        "drawn",
      );
      row("web: devices view's own first render (view start → 100 rows: its requests and drawing)", devices, "view");
      row("web: of which the view's request (sent → answer received, resource timing)", devices, "request");
      row("web: of which the drawing (answer received → 100 rows committed)", devices, "drawing");
      row("web: baseline, the same 100 devices by a bare fetch + JSON.parse in that page", devices, "bare");
      row(
        "web: devices view from the menu (the person's click on Devices → 100 rows), overview shown first",
        clicked,
        "clicked",
      );
      row("web: of which the view's request (sent → answer received)", clicked, "request");
      row("web: of which the drawing (answer received → 100 rows committed)", clicked, "drawing");
      row("web: baseline, the same 100 devices by a bare fetch in that page", clicked, "bare");
      row(`web: devices view sorted (${SORTED}) first render (login return → 100 rows)`, sorted, "drawn");
      row("web: baseline, the same sorted 100 devices by a bare fetch", sorted, "bare");
      row("web: overview first render (login return → every site x status count drawn)", overview, "drawn");
      row("web: baseline, GET /api/v1/devices/counts?groupBy=site,operationalStatus by a bare fetch", overview, "bare");
    } finally {
      await env.stop();
    }
  } finally {
    await db.drop();
  }
}
