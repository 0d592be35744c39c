/**
 * `npm run bench -- web`: the web UI in Chromium against a hub with 50,000 demo devices (25,000
 * per site), `BENCH_WEB_RUNS` (default 5) runs, alternating:
 *  - first render of the devices view: a person opens /ui/devices, logs in, and the issuer sends
 *    the browser back; measured in the page from that document's start (performance.now(): the
 *    bundle loaded, token exchanged, whoami and the first page of 100 devices fetched) to the
 *    100th row in the page (as Playwright sees it, within a frame or so of its drawing);
 *  - baseline: the same page of 100 brief devices fetched bare by the same page with a token of
 *    the same person (fetch and JSON.parse), the part of the render the hub and the network account for;
 *  - the bundle's JavaScript and CSS, raw and gzip-compressed.
 * Asserts nothing.
 */
import { createTestDatabase } from "@fm/test-support/postgres";
import { bundleSize, ensureWebBuilt } from "../scripts/build-web.ts";
import { USERS, seedDemo, startWebEnv } from "../test/web-env.ts";

type Report = (what: string, value: string, note?: string) => void;

const RUNS = Number(process.env.BENCH_WEB_RUNS ?? 5);
const DEVICES_PER_SITE = 25_000;
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
      const render: number[] = [];
      const bare: number[] = [];
      env.issuer.setUser(USERS.reader);
      const token = await env.issuer.token({ email: USERS.reader.email, groups: [], scope: "fleet.read" });
      for (let i = 0; i < RUNS; i++) {
        const context = await env.browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${env.hub.url}/ui/devices`);
        await page.getByRole("button", { name: "Log in" }).click();
        // A locator, not a string predicate: the UI's policy forbids eval, which string predicates use.
        await page.locator("table.devices tbody tr").nth(99).waitFor({ timeout: 120_000 });
        render.push(await page.evaluate<number>("performance.now()"));
        // The same request the view made, bare: fetch and JSON.parse in the same page, with a token of the same person.
        bare.push(
          await page.evaluate<number>(`(async () => {
            const t0 = performance.now();
            const res = await fetch("/api/v1/devices?limit=100&brief=true", { headers: { authorization: "Bearer ${token}" } });
            const body = await res.json();
            if (body.items.length !== 100) throw new Error("expected 100 devices, got " + body.items.length);
            return performance.now() - t0;
          })()`),
        );
        await context.close();
      }
      report(
        `web: devices view first render, ${total.toLocaleString()} devices (login return → 100 rows)`,
        `${median(render).toFixed(0)} ms`,
        spread(render),
      );
      report(
        "web: baseline, the same 100 devices by a bare fetch + JSON.parse in that page",
        `${median(bare).toFixed(0)} ms`,
        spread(bare),
      );
    } finally {
      await env.stop();
    }
  } finally {
    await db.drop();
  }
}
