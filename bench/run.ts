/**
 * `npm run bench`: measures the hub on this machine and compares it, in the same run, with
 * a baseline doing the same work. Prints a table; asserts nothing (see README, Benchmarks).
 *
 *  1. cold start of `npm start` on a fresh embedded database, and a warm restart (seconds)
 *  2. hub RSS when idle (MiB)
 *  3. GET /api/v1/sites/ with 1,000 sites: hub vs bare Fastify + pg running the same SQL
 *  4. GET /api/v1/devices/?site=…&limit=100 with 50,000 devices: hub vs bare Fastify + pg
 *  5. the same read route authenticated (bearer token) vs with authentication off
 *  6. the OpenStack agent's cycle against a real Ironic, and reads, hub vs Ironic (reflections.ts)
 *  7. hub apply of a pushed view vs a bare SQL upsert (reflections.ts)
 *  8. a NetBox sync of 10,000 devices with 8 interfaces each (netbox.ts)
 *  9. ENROL jobs through hub, workflow agent, Temporal and worker vs driving Ironic directly (jobs.ts)
 * 10. schema-driven fuzzing of every operation over HTTP vs valid reads at the same concurrency (fuzz.ts)
 *
 * 11. hub cold start and idle RSS, built (`npm run build`) vs from source under tsx (built.ts)
 * 12. the SLURM agent's cycle for 10,000 nodes vs the bare list + one push (slurm.ts)
 * 13. a health-status agent cycle for 10,000 devices on a real Prometheus vs the bare rule queries (health.ts)
 * 15. the inventory snapshot of 50,000 devices vs the device list pages, time and hub RSS (feed-snapshot.ts)
 * 20. feed catch-up: 100,000 of 200,006 events from position 0, raw and through the hub client, vs bare SQL (feed.ts)
 * 16. Ironic enrolment through the redfish driver and test BMCs vs fake-hardware (redfish.ts)
 * 17. the Matrix connector: records/s from the feed to Kusto acknowledgements, and commit -> ack
 *     latency at a steady 100 changes/s, vs bare feed reads (connector.ts)
 * 18. fleetctl: CLI start-up vs `node -e ''`, and `device list --format count` on 50,000 devices vs a bare fetch (fleetctl.ts)
 * 19. web: the devices view's first render in Chromium with 50,000 devices vs its device request alone, and the bundle's gzip size (web.ts)
 * 14. soak: two replicas under mixed agent and caller load for BENCH_SOAK_S (soak.ts; only on its own)
 *
 * `npm run bench -- <suite> [<suite> …]` runs those parts (start, built, sites, devices, ironic, netbox, slurm,
 * reflections, jobs, redfish, health, fuzz, feed-snapshot, feed, connector, fleetctl, web, soak); with none, every
 * part but the soak, each to its end: a failed part is reported and the others still run, and the exit
 * status is 1 if any failed. `BENCH_SMOKE=1`: tiny sizes (bench/config.ts), the soak included.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { adminQuery, createTestDatabase, urlFor } from "@fm/test-support/postgres";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { ironicCycle, reflectionApply } from "./reflections.ts";
import { slurmCycle } from "./slurm.ts";
import { netboxSync } from "./netbox.ts";
import { healthCycle } from "./health.ts";
import { jobsThroughput } from "./jobs.ts";
import { redfishEnrol } from "./redfish.ts";
import { builtVsTsx } from "./built.ts";
import { soak } from "./soak.ts";
import { fuzzRun } from "./fuzz.ts";
import { feedSnapshot } from "./feed-snapshot.ts";
import { feedCatchUp } from "./feed.ts";
import { connectorBench } from "./connector.ts";
import { fleetctlBench } from "./fleetctl.ts";
import { webBench } from "./web.ts";
import {
  CONNECTIONS,
  DEMO_DEVICES,
  DEMO_DEVICES_PER_SITE,
  DURATION_S,
  IDLE_MS,
  ROUNDS,
  SMOKE,
  WARMUP_S,
  knob,
} from "./config.ts";
import { ADMIN_SECRET, REPO_ROOT, bearer, clientToken, onJsonLines, startHub } from "@fm/test-support/process";

/**
 * Hubs log at the production level (info: a line per request received and completed); this
 * process, which drives the load on the same cores, does not parse those lines.
 */
const QUIET = { keepLogs: "errors" } as const;
const report = (what: string, value: string, note = "") => {
  console.log(`${what.padEnd(70)} ${value.padStart(10)}  ${note}`);
};

async function waitForLine(
  proc: ChildProcess,
  match: (l: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    onJsonLines(proc.stdout!, (l) => match(l) && resolve(l));
    proc.on("exit", (code) => reject(new Error(`exited ${code} before ready`)));
  });
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function coldStart(): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), "fm-bench-"));
  await chmod(parent, 0o755);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, FM_DATA_DIR: join(parent, "data"), PORT: "0" };
  try {
    for (const label of [
      "cold start: `npm start`, fresh embedded database",
      "warm restart: `npm start`, existing embedded database",
    ]) {
      const t0 = performance.now();
      const proc = spawn("npm", ["start", "--silent"], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
      const ready = await waitForLine(proc, (l) => l.msg === "hub ready");
      const res = await fetch(`${String(ready.address)}/readyz`);
      if (res.status !== 200) throw new Error(`readyz ${res.status}`);
      report(label, `${((performance.now() - t0) / 1000).toFixed(2)} s`, "spawn to /readyz 200");
      if (label.startsWith("cold")) {
        await new Promise((r) => setTimeout(r, IDLE_MS));
        report(
          "hub RSS idle (node process, embedded database)",
          `${(await rssMiB(Number(ready.pid))).toFixed(1)} MiB`,
          `${IDLE_MS / 1000} s after ready`,
        );
      }
      proc.kill("SIGTERM");
      await new Promise((r) => proc.on("exit", r));
    }
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

async function load(
  url: string,
  headers: Record<string, string> = {},
  duration = DURATION_S,
): Promise<autocannon.Result> {
  return autocannon({ url, connections: CONNECTIONS, duration, headers });
}

/**
 * Both sides answer the same items and count (by id); with `sameBytes`, the very same bytes.
 * Throws (the benchmark stops) otherwise; returns the size of each side's answer.
 */
async function sameAnswer(
  hubUrl: string,
  headers: Record<string, string>,
  baseUrl: string,
  sameBytes: boolean,
): Promise<{ hub: number; base: number }> {
  const [h, b] = await Promise.all([
    fetch(hubUrl, { headers }).then((r) => r.text()),
    fetch(baseUrl).then((r) => r.text()),
  ]);
  const ids = (text: string) => {
    const page = JSON.parse(text) as { items: { id: string }[]; count: number };
    return `${page.count}: ${page.items.map((i) => i.id).join(",")}`;
  };
  if (ids(h) !== ids(b)) throw new Error(`hub and baseline answered different items:\n${ids(h)}\n${ids(b)}`);
  if (sameBytes && h !== b)
    throw new Error(`hub and baseline answered different bytes:\n${h.slice(0, 500)}\n${b.slice(0, 500)}`);
  return { hub: Buffer.byteLength(h), base: Buffer.byteLength(b) };
}

/** Loads the hub and a baseline process with the same request, warm-up first, one after the other. */
async function compare(
  label: string,
  hubUrl: string,
  baselineScript: string,
  path: string,
  databaseUrl: string,
  note: string,
  headers: Record<string, string>,
  sameBytes: boolean,
): Promise<void> {
  const baseline = spawn(process.execPath, ["--import", "tsx", baselineScript], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = await waitForLine(baseline, (l) => l.msg === "baseline ready");
  try {
    const base = `${String(ready.address)}${path}`;
    const bytes = await sameAnswer(hubUrl + path, headers, base, sameBytes);
    await load(hubUrl + path, headers, WARMUP_S);
    await load(base, {}, WARMUP_S);
    const h = await load(hubUrl + path, headers);
    const b = await load(base);
    if (h.non2xx || b.non2xx || h.errors || b.errors)
      throw new Error(`errors during load: hub ${h.non2xx}/${h.errors}, baseline ${b.non2xx}/${b.errors}`);
    report(`${label} hub req/s`, h.requests.average.toFixed(0), `${CONNECTIONS} connections, ${DURATION_S} s, ${note}`);
    report(`${label} hub p99 latency`, `${h.latency.p99} ms`);
    report(`${label} baseline (Fastify + pg, same SQL) req/s`, b.requests.average.toFixed(0));
    report(`${label} baseline p99 latency`, `${b.latency.p99} ms`);
    report(`${label} hub / baseline throughput`, `${((h.requests.average / b.requests.average) * 100).toFixed(0)} %`);
    report(
      `${label} bytes per answer, hub / baseline`,
      `${bytes.hub} / ${bytes.base}`,
      sameBytes ? "the same bytes (checked)" : "the same items and count (checked); the representations differ",
    );
  } finally {
    baseline.kill("SIGTERM");
  }
}

/** A baseline server process (bench/baseline-*.ts) on the database; its URL and a stop. */
async function startBaseline(script: string, databaseUrl: string, env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = await waitForLine(proc, (l) => l.msg === "baseline ready");
  const exited = new Promise((r) => proc.on("exit", r));
  return {
    url: String(ready.address),
    // Waits for the exit: dropping the database under a live pool crashes the baseline loudly.
    stop: async () => {
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

const spread = (xs: number[]) =>
  `median ${median(xs).toFixed(0)}, ${Math.min(...xs).toFixed(0)} to ${Math.max(...xs).toFixed(0)}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The device list on 50,000 demo devices (25,000 at the site), in rounds, each loading in turn
 * the hub's full page, the hub's brief page, the bare handler without its count (the goal's
 * reference) and the bare handler with it; ratios per round, then their median and spread.
 */
async function devicesList(): Promise<void> {
  const db = await devicesDatabase();
  try {
    if (db.seed) {
      await migrate(db.url);
      const { createDatabase } = await import("../apps/hub/src/db/client.ts");
      const { seedDemo } = await import("../apps/hub/src/seed/demo.ts");
      const data = createDatabase(db.url, { poolMax: 4 });
      const t0 = performance.now();
      // The seed analyses what it loaded, as a first NetBox load does: no ANALYZE of our own here.
      const seeded = await seedDemo(data.prisma, { devicesPerSite: DEMO_DEVICES_PER_SITE });
      await data.close();
      report(
        `seed ${DEMO_DEVICES.toLocaleString("en")} devices (demo generator, with feed events)`,
        `${((performance.now() - t0) / 1000).toFixed(1)} s`,
        `${seeded.devices} devices`,
      );
    } else
      report(
        `seed ${DEMO_DEVICES.toLocaleString("en")} devices`,
        "kept",
        `database ${db.name} of an earlier run (BENCH_DEVICES_DB)`,
      );
    const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, {
      ...QUIET,
      nodeArgs: hubNodeArgs(),
    });
    const bare = await startBaseline("bench/baseline-devices.ts", db.url, { BASELINE_COUNT: "false" });
    const counted = await startBaseline("bench/baseline-devices.ts", db.url);
    try {
      const auth = bearer(await clientToken(hub.url, "fleet-admin", ADMIN_SECRET));
      const path = "/api/v1/devices/?site=keflavik&limit=100";
      const bytes = await sameAnswer(hub.url + path, auth, counted.url + path, false);
      const brief = await fetch(`${hub.url}${path}&brief=true`, { headers: auth }).then((r) => r.text());
      const briefIds = (JSON.parse(brief) as { items: { id: string }[] }).items.map((i) => i.id).join();
      const bareIds = ((await (await fetch(bare.url + path)).json()) as { items: { id: string }[] }).items
        .map((i) => i.id)
        .join();
      if (briefIds !== bareIds) throw new Error("the brief page and the bare page hold different devices");
      const sides = {
        "hub full": [hub.url + path, auth],
        "hub brief": [`${hub.url}${path}&brief=true`, auth],
        "bare, no count": [bare.url + path, {}],
        "bare, with count": [counted.url + path, {}],
      } as const;
      for (const [url, headers] of Object.values(sides)) await load(url, headers, WARMUP_S);
      const perSide = (): Record<keyof typeof sides, number[]> => ({
        "hub full": [],
        "hub brief": [],
        "bare, no count": [],
        "bare, with count": [],
      });
      const rps = perSide();
      const p99 = perSide();
      const rounds = ROUNDS;
      for (let round = 0; round < rounds; round++)
        for (const [name, [url, headers]] of Object.entries(sides) as [
          keyof typeof sides,
          readonly [string, Record<string, string>],
        ][]) {
          const r = await load(url, headers);
          if (r.non2xx || r.errors) throw new Error(`errors during load of ${name}: ${r.non2xx}/${r.errors}`);
          rps[name].push(r.requests.average);
          p99[name].push(r.latency.p99);
        }
      const label = "GET /api/v1/devices/?site=keflavik&limit=100";
      for (const name of Object.keys(rps) as (keyof typeof sides)[])
        report(
          `${label} ${name} req/s`,
          median(rps[name]).toFixed(0),
          `${spread(rps[name])}; p99 ${spread(p99[name])} ms`,
        );
      const ratio = (a: keyof typeof sides, b: keyof typeof sides) => {
        const rs = rps[a].map((x, i) => (x / rps[b][i]!) * 100);
        return [`${median(rs).toFixed(0)} %`, `per round: ${rs.map((r) => r.toFixed(0)).join(", ")} %`] as const;
      };
      report("hub full / bare without count", ...ratio("hub full", "bare, no count"));
      report("hub full / bare with count", ...ratio("hub full", "bare, with count"));
      report("hub brief / bare without count", ...ratio("hub brief", "bare, no count"));
      report("hub brief / hub full", ...ratio("hub brief", "hub full"));
      report(
        "bytes per page: hub full / bare / hub brief",
        `${bytes.hub} / ${bytes.base} / ${Buffer.byteLength(brief)}`,
        `${rounds} rounds × ${DURATION_S} s each side, ${CONNECTIONS} connections; same devices (checked)`,
      );
    } finally {
      await Promise.all([bare.stop(), counted.stop(), hub.stop()]);
    }
  } finally {
    await db.drop();
  }
}

/** Extra node arguments for the measured hub, e.g. BENCH_HUB_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const hubNodeArgs = () => (process.env.BENCH_HUB_NODE_ARGS ?? "").split(" ").filter(Boolean);

/**
 * The devices part's database: a fresh one, seeded and dropped; or, with BENCH_DEVICES_DB=<name>
 * (while iterating on the hub), that database, migrated and seeded on its first run and kept, so
 * later runs skip the minute of seeding. Drop it by hand when done (or when the migrations change).
 */
async function devicesDatabase(): Promise<{ name: string; url: string; seed: boolean; drop(): Promise<void> }> {
  const kept = process.env.BENCH_DEVICES_DB;
  if (!kept) return { ...(await createTestDatabase()), seed: true };
  if (!/^[a-z][a-z0-9_]*$/.test(kept) || kept.startsWith("fm_t_") || kept.startsWith("fm_template_"))
    throw new Error(`BENCH_DEVICES_DB: a lower-case name outside the tests' fm_t_/fm_template_ databases`);
  const exists = (await adminQuery("SELECT 1 FROM pg_database WHERE datname = $1", [kept])).rowCount === 1;
  const url = urlFor(kept);
  if (exists) {
    const pg = (await import("pg")).default;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const seeded = await c
      .query<{ n: number }>("SELECT count(*)::int AS n FROM devices")
      .then((r) => r.rows[0]!.n === DEMO_DEVICES)
      .catch(() => false)
      .finally(() => c.end());
    if (seeded) return { name: kept, url, seed: false, drop: async () => {} };
    await adminQuery(`DROP DATABASE ${kept} WITH (FORCE)`);
  }
  await adminQuery(`CREATE DATABASE ${kept}`);
  return { name: kept, url, seed: true, drop: async () => {} };
}

async function sitesList(): Promise<void> {
  /** Sites in the list. */
  const SITES = knob("BENCH_SITES", 1000, 150);
  const db = await createTestDatabase();
  try {
    await migrate(db.url);
    const pg = (await import("pg")).default;
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query(
      "INSERT INTO sites (slug, name, region) SELECT 'site-' || g, 'Site ' || g, 'region-' || (g % 7) FROM generate_series(1, $1::int) g",
      [SITES],
    );
    await c.end();

    const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, QUIET);
    await new Promise((r) => setTimeout(r, 500));
    report("hub RSS idle (node process, external database)", `${(await rssMiB(hub.proc.pid!)).toFixed(1)} MiB`);
    try {
      const auth = bearer(await clientToken(hub.url, "fleet-admin", ADMIN_SECRET));
      await compare(
        "GET /api/v1/sites/",
        hub.url,
        "bench/baseline-sites.ts",
        "/api/v1/sites/",
        db.url,
        `100 items/page of ${SITES.toLocaleString("en")}`,
        auth,
        true,
      );
      // The price of authentication: the same route on the same database, with a verified
      // bearer token (signature, claims, client state) and on a hub with FM_AUTH=none.
      const open = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10", FM_AUTH: "none" }, undefined, QUIET);
      try {
        await load(`${open.url}/api/v1/sites/`, {}, WARMUP_S);
        const a = await load(`${hub.url}/api/v1/sites/`, auth);
        const u = await load(`${open.url}/api/v1/sites/`);
        report(
          "GET /api/v1/sites/ authenticated (EdDSA bearer token) req/s",
          a.requests.average.toFixed(0),
          `p99 ${a.latency.p99} ms`,
        );
        report(
          "GET /api/v1/sites/ unauthenticated (FM_AUTH=none) req/s",
          u.requests.average.toFixed(0),
          `p99 ${u.latency.p99} ms`,
        );
        report(
          "authenticated / unauthenticated throughput",
          `${((a.requests.average / u.requests.average) * 100).toFixed(0)} %`,
        );
      } finally {
        await open.stop();
      }
    } finally {
      await hub.stop();
    }
  } finally {
    await db.drop();
  }
}

/** Every suite, in the order a full run takes them; `soak` runs only when named (30 min by default). */
const SUITES: Record<string, () => Promise<void>> = {
  start: coldStart,
  built: () => builtVsTsx(report),
  sites: sitesList,
  devices: devicesList,
  ironic: () => ironicCycle(report),
  netbox: () => netboxSync(report),
  slurm: () => slurmCycle(report),
  reflections: async () => {
    for (const n of REFLECTION_SIZES) await reflectionApply(report, n);
  },
  jobs: () => jobsThroughput(report),
  redfish: () => redfishEnrol(report),
  health: () => healthCycle(report),
  fuzz: () => fuzzRun(report),
  "feed-snapshot": () => feedSnapshot(report),
  feed: () => feedCatchUp(report),
  connector: () => connectorBench(report),
  fleetctl: () => fleetctlBench(report),
  web: () => webBench(report),
  soak: () => soak(report),
};
const REFLECTION_SIZES = (process.env.BENCH_REFLECTION_SIZES ?? (SMOKE ? "200" : "10000,50000")).split(",").map(Number);
const NAMED_ONLY = new Set(["soak"]);

const named = process.argv.slice(2);
const unknown = named.filter((n) => !(n in SUITES));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(", ")}; the suites: ${Object.keys(SUITES).join(", ")}`);
  process.exit(2);
}
const chosen = named.length ? named : Object.keys(SUITES).filter((n) => !NAMED_ONLY.has(n) || SMOKE);
console.log(
  `Fleet Manager benchmarks on ${process.version}, ${(await import("node:os")).cpus().length} cores` +
    (SMOKE ? "; smoke mode: tiny sizes, one short round, figures that say nothing about speed" : "") +
    "\n",
);
// Each suite runs to its end or its failure; a failed one does not stop the others.
const results: { suite: string; ok: boolean; s: number; error?: string }[] = [];
for (const suite of chosen) {
  console.log(`\n## ${suite}`);
  const t0 = performance.now();
  try {
    await SUITES[suite]!();
    results.push({ suite, ok: true, s: (performance.now() - t0) / 1000 });
  } catch (e) {
    const error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    console.error(`benchmark ${suite} failed: ${error}`);
    results.push({ suite, ok: false, s: (performance.now() - t0) / 1000, error: error.split("\n")[0] });
  }
}
console.log("\n## results");
for (const r of results)
  console.log(
    `${r.suite.padEnd(16)} ${r.ok ? "ok    " : "FAILED"} ${r.s.toFixed(1).padStart(7)} s${r.error ? `  ${r.error}` : ""}`,
  );
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
