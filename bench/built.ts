/**
 * `npm run bench -- built`: the hub as the charts and the image run it (`npm run build`, plain
 * node on apps/hub/dist) against the hub from source under tsx (`npm start`'s way), on one
 * PostgreSQL database migrated beforehand, so each start does the same work: connect, find no
 * migration to apply, serve. Alternating runs, `BENCH_BUILT_RUNS` (default 7) of each:
 *  - cold start: spawn to the first `/readyz` 200 (median, min and max);
 *  - idle RSS of the node process 3 s after ready (median).
 * Then, on the same database seeded with the demo's 50,000 devices (25,000 at the site), the
 * built hub's RSS under the device-list load (`GET /api/v1/devices/?site=…&limit=100`, 10
 * connections for BENCH_DURATION_S, default 10 s): its highest sample (every 250 ms) and the
 * figure 3 s after the load, with the load's req/s.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import autocannon from "autocannon";
import { createTestDatabase } from "@fm/test-support/postgres";
import {
  ADMIN_SECRET,
  REPO_ROOT,
  TEST_KEK,
  bearer,
  clientToken,
  hubArgs,
  onJsonLines,
  startHub,
} from "@fm/test-support/process";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { DEMO_DEVICES, DEMO_DEVICES_PER_SITE, DURATION_S, IDLE_MS, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const RUNS = knob("BENCH_BUILT_RUNS", 7, 1);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** One start: seconds from spawn to /readyz 200, and RSS once idle. */
async function startOnce(built: boolean, databaseUrl: string): Promise<{ startS: number; rss: number }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, hubArgs(built), {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: "0",
      DATABASE_URL: databaseUrl,
      FM_BOOTSTRAP_ADMIN_SECRET: ADMIN_SECRET,
      FM_KEY_ENCRYPTION_KEY: TEST_KEK,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      onJsonLines(proc.stdout, (l) => l.msg === "hub ready" && resolve(l));
      proc.on("exit", (code) => reject(new Error(`hub exited ${code} before ready`)));
    });
    const url = String(ready.address).replace("0.0.0.0", "127.0.0.1");
    while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 10));
    const startS = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { startS, rss: await rssMiB(proc.pid!) };
  } finally {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.exitCode !== null || proc.on("exit", r));
  }
}

export async function builtVsTsx(report: Report): Promise<void> {
  execFileSync("npm", ["run", "-s", "build"], { cwd: REPO_ROOT, stdio: "inherit" });
  const db = await createTestDatabase();
  try {
    await migrate(db.url);
    const runs = { built: [] as { startS: number; rss: number }[], tsx: [] as { startS: number; rss: number }[] };
    // Alternate, so a change in the machine's load falls on both sides alike.
    for (let i = 0; i < RUNS; i++) {
      runs.built.push(await startOnce(true, db.url));
      runs.tsx.push(await startOnce(false, db.url));
    }
    for (const [side, label] of [
      ["built", "built (node apps/hub/dist/main.js)"],
      ["tsx", "source (node --import tsx apps/hub/src/main.ts)"],
    ] as const) {
      const starts = runs[side].map((r) => r.startS);
      report(
        `hub cold start, ${label}`,
        `${median(starts).toFixed(2)} s`,
        `median of ${RUNS}, min ${Math.min(...starts).toFixed(2)}, max ${Math.max(...starts).toFixed(2)}; spawn to /readyz 200`,
      );
      report(
        `hub idle RSS, ${label}`,
        `${median(runs[side].map((r) => r.rss)).toFixed(1)} MiB`,
        `median of ${RUNS}, ${IDLE_MS / 1000} s after ready`,
      );
    }
    report(
      "built / source cold start",
      `${((median(runs.built.map((r) => r.startS)) / median(runs.tsx.map((r) => r.startS))) * 100).toFixed(0)} %`,
    );
    await deviceListLoad(report, db.url);
  } finally {
    await db.drop();
  }
}

/** The built hub's RSS while the device list is loaded, and once the load stops. */
async function deviceListLoad(report: Report, databaseUrl: string): Promise<void> {
  const { createDatabase } = await import("../apps/hub/src/db/client.ts");
  const { seedDemo } = await import("../apps/hub/src/seed/demo.ts");
  const data = createDatabase(databaseUrl, { poolMax: 4 });
  try {
    await seedDemo(data.prisma, { devicesPerSite: DEMO_DEVICES_PER_SITE });
  } finally {
    await data.close();
  }
  const hub = await startHub({ DATABASE_URL: databaseUrl, FM_DB_POOL_MAX: "10" }, undefined, {
    built: true,
    keepLogs: "errors",
  });
  try {
    const url = `${hub.url}/api/v1/devices/?site=keflavik&limit=100`;
    const headers = bearer(await clientToken(hub.url, "fleet-admin", ADMIN_SECRET));
    let exited: number | string | undefined;
    void hub.exited.then((code) => (exited = code));
    let peak = 0;
    const sampler = setInterval(() => {
      rssMiB(hub.proc.pid!).then(
        (r) => (peak = Math.max(peak, r)),
        () => {}, // the hub has gone: reported below
      );
    }, 250);
    let result: autocannon.Result;
    try {
      result = await autocannon({ url, headers, connections: 10, duration: DURATION_S });
    } finally {
      clearInterval(sampler);
    }
    await new Promise((r) => setTimeout(r, IDLE_MS));
    if (exited !== undefined)
      throw new Error(`the hub exited (${exited}) under load:\n${hub.stderr.join("")}\n${JSON.stringify(hub.logs)}`);
    if (result.non2xx || result.errors) throw new Error(`errors under load: ${result.non2xx}/${result.errors}`);
    const after = await rssMiB(hub.proc.pid!);
    report(
      "hub RSS under the device-list load, built (highest sample)",
      `${peak.toFixed(1)} MiB`,
      `GET /api/v1/devices/?site=keflavik&limit=100 of ${DEMO_DEVICES.toLocaleString("en")} devices, 10 connections, ${DURATION_S} s, ${result.requests.average.toFixed(0)} req/s`,
    );
    report(
      "hub RSS after the device-list load, built",
      `${after.toFixed(1)} MiB`,
      `${IDLE_MS / 1000} s after the load`,
    );
  } finally {
    await hub.stop();
  }
}
