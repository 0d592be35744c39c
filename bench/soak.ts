/**
 * Soak: two hub replicas on one database under mixed agent and caller load for
 * BENCH_SOAK_S seconds (default 1,800). Agents: per site, an Ironic view pushed every
 * few seconds (1 % of its nodes changing) and a heartbeat, each to the replica after the last.
 * Callers: device pages (full and brief), single devices, cordon and uncordon with If-Match,
 * site lists, and a feed reader following the feed, spread over both replicas.
 * Reported: each replica's RSS at the start and end and its slope (least squares over a
 * sample every 10 s), p50/p99 latency and count per route, and every error (a 5xx, a
 * transport error, or a 4xx the caller did not expect). The reference for memory is each
 * replica's own first sample: a flat slope over the run is the goal, a rising one a leak.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IronicItem } from "@fm/domain";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { seedDemo } from "../apps/hub/src/seed/demo.ts";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const SOAK_S = knob("BENCH_SOAK_S", 1800, 15);
const PER_SITE = knob("BENCH_SOAK_DEVICES", 2000, 50);
const TOKEN_RENEW_MS = 5 * 60_000;

const rssMiB = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den ? num / den : 0;
}

export async function soak(report: Report): Promise<void> {
  const db = await createTestDatabase();
  await migrate(db.url);
  const data = createDatabase(db.url, { poolMax: 4 });
  await seedDemo(data.prisma, { devicesPerSite: PER_SITE });
  const sites = await data.prisma.site.findMany({ select: { id: true, slug: true } });
  await data.close();
  const env = { DATABASE_URL: db.url, FM_ISSUER_URL: "http://soak.bench" };
  const hubs: HubProcess[] = await Promise.all([0, 1].map(() => startHub(env, undefined, { keepLogs: "errors" })));
  const stop = { now: false };
  const latency = new Map<string, number[]>();
  const errors: string[] = [];
  let turn = 0;
  const hub = () => hubs[turn++ % 2]!;
  async function call(route: string, path: string, init: RequestInit, ok: (status: number) => boolean) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${hub().url}${path}`, init);
      const text = await res.text();
      if (!ok(res.status) && errors.length < 1000) errors.push(`${route} ${res.status} ${text.slice(0, 200)}`);
      if (!latency.has(route)) latency.set(route, []);
      latency.get(route)!.push(performance.now() - t0);
      return { status: res.status, text, etag: res.headers.get("etag") };
    } catch (err) {
      if (errors.length < 1000) errors.push(`${route} ${(err as Error).message}`);
      return { status: 0, text: "", etag: null };
    }
  }
  try {
    // Tokens outlive no soak: every caller takes a new one every TOKEN_RENEW_MS, as a client
    // renews before `expires_in` (the hub's default lifetime is shorter than the run).
    const adminToken = () => clientToken(hubs[0]!.url, "fleet-admin", ADMIN_SECRET);
    let adminBearer = bearer(await adminToken());
    const admin = () => adminBearer;
    const json = () => ({ ...adminBearer, "content-type": "application/json" });
    const agents = await Promise.all(
      sites.map(async (s, i) => {
        const res = await fetch(`${hubs[0]!.url}/api/v1/satellites/`, {
          method: "POST",
          headers: json(),
          body: JSON.stringify({ name: `soak-${i}`, siteIds: [s.id], environment: "dev" }),
        });
        const secrets = ((await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] })
          .secrets;
        const c = secrets.find((x) => x.agent === "openstack")!;
        const renew = () => clientToken(hubs[1]!.url, c.clientId, c.clientSecret, "fleet.read agent:openstack");
        return { site: s, token: await renew(), renew, satellite: `soak-${i}` };
      }),
    );
    const nodes = new Map<string, IronicItem[]>();
    for (const a of agents) {
      const items: IronicItem[] = [];
      for (let cursor: string | null = ""; cursor !== null;) {
        const page = (await (
          await fetch(
            `${hubs[0]!.url}/api/v1/devices/?site=${a.site.slug}&brief=true&limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
            { headers: admin() },
          )
        ).json()) as { items: { name: string }[]; nextCursor: string | null };
        items.push(
          ...page.items.map((d) => ({
            uuid: randomUUID(),
            name: d.name,
            serial: null,
            provisionState: "available",
            targetProvisionState: null,
            powerState: "power off",
            maintenance: false,
            maintenanceReason: null,
            lastError: null,
            fault: null,
          })),
        );
        cursor = page.nextCursor;
      }
      nodes.set(a.site.id, items);
    }
    const loops: Promise<void>[] = [];
    const every = (ms: number, body: () => Promise<unknown>) =>
      loops.push(
        (async () => {
          while (!stop.now) {
            const t0 = performance.now();
            await body();
            await new Promise((r) => setTimeout(r, Math.max(0, ms - (performance.now() - t0))));
          }
        })(),
      );
    for (const a of agents) {
      let round = 0;
      every(5000, async () => {
        const items = nodes.get(a.site.id)!;
        for (let k = 0; k < items.length / 100; k++) {
          const i = (round * Math.ceil(items.length / 100) + k) % items.length;
          items[i] = {
            ...items[i]!,
            provisionState: items[i]!.provisionState === "available" ? "active" : "available",
          };
        }
        round++;
        await call(
          "PUT reflections/ironic-overcloud",
          `/api/v1/sites/${a.site.id}/reflections/ironic-overcloud`,
          {
            method: "PUT",
            headers: { ...bearer(a.token), "content-type": "application/json" },
            body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items }),
          },
          (s) => s === 200,
        );
      });
      every(10_000, () =>
        call(
          "POST heartbeat",
          `/api/v1/satellites/${a.satellite}/agents/openstack/heartbeat`,
          {
            method: "POST",
            headers: { ...bearer(a.token), "content-type": "application/json" },
            body: JSON.stringify({ version: "soak", reflectors: { "ironic-overcloud": 5 } }),
          },
          (s) => s < 300,
        ),
      );
    }
    let renewed = Date.now();
    every(10_000, async () => {
      if (Date.now() - renewed < TOKEN_RENEW_MS) return;
      renewed = Date.now();
      adminBearer = bearer(await adminToken());
      for (const a of agents) a.token = await a.renew();
    });
    const site = sites[0]!.slug;
    every(200, () =>
      call("GET devices (full)", `/api/v1/devices/?site=${site}&limit=100`, { headers: admin() }, (s) => s === 200),
    );
    every(200, () =>
      call(
        "GET devices (brief)",
        `/api/v1/devices/?site=${site}&limit=100&brief=true`,
        { headers: admin() },
        (s) => s === 200,
      ),
    );
    every(500, () => call("GET sites", "/api/v1/sites/", { headers: admin() }, (s) => s === 200));
    every(1000, async () => {
      const some = nodes.get(sites[0]!.id)!;
      const page = await call(
        "GET devices (by name)",
        `/api/v1/devices/?nameExact=${some[Math.floor(Math.random() * some.length)]!.name}`,
        { headers: admin() },
        (s) => s === 200,
      );
      const id = (JSON.parse(page.text || "{}") as { items?: { id: string }[] }).items?.[0]?.id;
      if (!id) return;
      const got = await call("GET device", `/api/v1/devices/${id}`, { headers: admin() }, (s) => s === 200);
      const cordoned = (JSON.parse(got.text || "{}") as { cordoned?: boolean }).cordoned;
      await call(
        "PATCH device (If-Match)",
        `/api/v1/devices/${id}`,
        {
          method: "PATCH",
          headers: { ...json(), "if-match": got.etag ?? "*" },
          body: JSON.stringify(cordoned ? { cordoned: false } : { cordoned: true, cordonReason: "soak" }),
        },
        (s) => s === 200 || s === 412, // 412: an agent's push changed it in between, as If-Match intends
      );
    });
    let after = "0";
    every(0, async () => {
      const r = await call(
        "GET feed (wait=5)",
        `/api/v1/feeds/inventory?after=${after}&limit=1000&wait=5`,
        { headers: admin() },
        (s) => s === 200,
      );
      if (r.status === 200) after = (JSON.parse(r.text) as { nextAfter: string }).nextAfter;
    });

    const rss: [number, number][][] = [[], []];
    const t0 = Date.now();
    while (Date.now() - t0 < SOAK_S * 1000) {
      await new Promise((r) => setTimeout(r, Math.min(10_000, SOAK_S * 1000 - (Date.now() - t0))));
      for (const [i, h] of hubs.entries()) rss[i]!.push([(Date.now() - t0) / 60_000, await rssMiB(h.proc.pid!)]);
    }
    stop.now = true;
    await Promise.all(loops);

    report(`soak: ${SOAK_S} s, two replicas, ${sites.length} sites × ${PER_SITE} devices`, `${errors.length} errors`);
    for (const [i, points] of rss.entries())
      report(
        `soak: replica ${i + 1} RSS first / last sample, slope`,
        `${slope(points).toFixed(2)} MiB/min`,
        `${points[0]?.[1].toFixed(0)} / ${points.at(-1)?.[1].toFixed(0)} MiB, ${points.length} samples`,
      );
    for (const [route, xs] of [...latency.entries()].sort())
      report(
        `soak: ${route}`,
        `${pct(xs, 0.99).toFixed(0)} ms p99`,
        `p50 ${pct(xs, 0.5).toFixed(0)} ms, ${xs.length} requests`,
      );
    const kinds = new Map<string, number>();
    for (const e of errors) kinds.set(e.slice(0, 80), (kinds.get(e.slice(0, 80)) ?? 0) + 1);
    for (const [k, n] of kinds) console.log(`  ${n} × error: ${k}`);
    for (const e of errors.slice(0, 5)) console.log(`  error: ${e}`);
    // What the hubs logged at ERROR: a 5xx's cause.
    for (const [i, h] of hubs.entries())
      for (const l of h.logs.filter((x) => x.level === "ERROR" || x.level === "FATAL").slice(0, 5))
        console.log(`  replica ${i + 1} logged: ${JSON.stringify(l).slice(0, 600)}`);
  } finally {
    stop.now = true;
    await Promise.all(hubs.map((h) => h.stop()));
    await db.drop();
  }
}
