/**
 * `npm run bench -- fleetctl`: the CLI's start-up and the runbook's device count, each against a
 * baseline run in the same process, alternating, `BENCH_FLEETCTL_RUNS` (default 7) runs of each:
 *  - start-up: `fleetctl --version` and `--help`, from source (the npm bin, tsx) and built
 *    (apps/fleetctl/dist, built here), against `node -e ''` (what any node program costs);
 *  - `fleetctl api device list --format count` on 50,000 devices (demo generator) with a cached
 *    token, against one bare `fetch` of the same request by `node -e` (the hub's share and
 *    node's start, without the CLI).
 * Wall times from spawn to exit, median, min and max. Asserts nothing.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, REPO_ROOT, clientToken, startHub } from "@fm/test-support/process";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { FLEETCTL_BUILT, buildFleetctl } from "../scripts/build-fleetctl.ts";
import { DEMO_DEVICES_PER_SITE, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const RUNS = knob("BENCH_FLEETCTL_RUNS", 7, 1);
const BIN = join(REPO_ROOT, "apps/fleetctl/bin/fleetctl.js");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (xs: number[]) =>
  [`${median(xs).toFixed(0)} ms`, `min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}`] as const;

/** Wall time of one run, spawn to exit; throws when it fails or does not print what it should. */
function timed(args: string[], env: NodeJS.ProcessEnv, expect?: RegExp): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: REPO_ROOT, env, encoding: "utf8" });
  const elapsed = performance.now() - t0;
  if (r.status !== 0 || (expect && !expect.test(r.stdout)))
    throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 500)}`);
  return elapsed;
}

/** Each case once per round, in turn, so a noisy moment hits them all alike. */
function rounds(cases: Record<string, () => number>): Record<string, number[]> {
  const out = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]]));
  for (const run of Object.values(cases)) run(); // warm the file cache and tsx's
  for (let i = 0; i < RUNS; i++) for (const [k, run] of Object.entries(cases)) out[k]!.push(run());
  return out;
}

export async function fleetctlBench(report: Report): Promise<void> {
  await buildFleetctl();
  const home = await mkdtemp(join(tmpdir(), "fm-bench-fleetctl-"));
  const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  try {
    const start = rounds({
      "node -e ''": () => timed(["-e", ""], env),
      "fleetctl --version (npm bin, tsx)": () => timed([BIN, "--version"], env, /\d+\.\d+\.\d+/),
      "fleetctl --help (npm bin, tsx)": () => timed([BIN, "--help"], env, /Usage: fleetctl/),
      "fleetctl --version (built)": () => timed([FLEETCTL_BUILT, "--version"], env, /\d+\.\d+\.\d+/),
      "fleetctl --help (built)": () => timed([FLEETCTL_BUILT, "--help"], env, /Usage: fleetctl/),
    });
    for (const [k, xs] of Object.entries(start)) report(`start-up: ${k}`, ...ms(xs));
    await deviceCount(report, env, home);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

async function deviceCount(report: Report, env: NodeJS.ProcessEnv, home: string): Promise<void> {
  const db = await createTestDatabase();
  try {
    await migrate(db.url);
    const { createDatabase } = await import("../apps/hub/src/db/client.ts");
    const { seedDemo } = await import("../apps/hub/src/seed/demo.ts");
    const data = createDatabase(db.url, { poolMax: 4 });
    const seeded = await seedDemo(data.prisma, { devicesPerSite: DEMO_DEVICES_PER_SITE });
    await data.close();
    const hub = await startHub({ DATABASE_URL: db.url }, undefined, { keepLogs: "errors" });
    try {
      const secretFile = join(home, "admin.secret");
      await writeFile(secretFile, ADMIN_SECRET, { mode: 0o600 });
      const login = [
        "api",
        "login",
        "--scope",
        "read-only",
        "--client-id",
        "fleet-admin",
        "--client-secret-file",
        secretFile,
      ];
      timed([FLEETCTL_BUILT, "--hub", hub.url, ...login], env);
      const token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET, "fleet.read");
      const count = new RegExp(`^${seeded.devices}\\n$`);
      const fetchOnce = `const r = await fetch(${JSON.stringify(`${hub.url}/api/v1/devices/?limit=1&brief=true`)}, { headers: { authorization: "Bearer ${token}" } }); console.log((await r.json()).count);`;
      const runs = rounds({
        "bare fetch by node -e (baseline)": () => timed(["--input-type=module", "-e", fetchOnce], env, count),
        "fleetctl (npm bin, tsx)": () =>
          timed([BIN, "--hub", hub.url, "api", "device", "list", "--format", "count"], env, count),
        "fleetctl (built)": () =>
          timed([FLEETCTL_BUILT, "--hub", hub.url, "api", "device", "list", "--format", "count"], env, count),
      });
      for (const [k, xs] of Object.entries(runs))
        report(`device list --format count, ${seeded.devices} devices: ${k}`, ...ms(xs));
    } finally {
      await hub.stop();
    }
  } finally {
    await db.drop();
  }
}
