/**
 * `npm run bench` in its smoke mode (`BENCH_SMOKE=1`, bench/config.ts): every suite, the soak
 * included, runs with tiny sizes and one short round against the real peers, and its same-work
 * checks hold (the hub and its baseline answer the same rows, the same bytes, reach the same end
 * state). A baseline that drifts from the hub, or a suite that no longer starts, fails here,
 * long before anyone measures. The figures are printed and never judged: speed is measured by a
 * full run, on a quiet machine, not by a test.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@fm/test-support/process";

/** Every suite bench/run.ts knows, in its order (the soak runs only when named, or in smoke mode). */
const SUITES = [
  "start",
  "built",
  "sites",
  "devices",
  "ironic",
  "netbox",
  "slurm",
  "reflections",
  "jobs",
  "redfish",
  "health",
  "fuzz",
  "feed-snapshot",
  "feed",
  "connector",
  "fleetctl",
  "web",
  "soak",
];

function bench(env: Record<string, string>, args: string[] = []) {
  const child = spawn("npm", ["run", "-s", "bench", "--", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, BENCH_SMOKE: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, out })),
  );
}

/** The closing table: one line a suite, `<suite> ok|FAILED <seconds> s`. */
const results = (out: string) =>
  Object.fromEntries(
    [...out.split("## results")[1]!.matchAll(/^(\S+)\s+(ok|FAILED)\s+[\d.]+ s/gm)].map((m) => [m[1]!, m[2]!]),
  );

describe("the benchmarks in smoke mode", () => {
  it(
    "run every suite to its end with their same-work checks holding, and print no verdict on speed",
    { timeout: 600_000 },
    async () => {
      const { code, out } = await bench({});
      expect(results(out), out.slice(-4000)).toEqual(Object.fromEntries(SUITES.map((s) => [s, "ok"])));
      expect(code).toBe(0);
      expect(out).toMatch(/^18 passed, 0 failed$/m);
      // The checks that make a comparison honest ran (each suite prints what it checked).
      expect(out).toContain("the same bytes (checked)");
      expect(out).toContain("same devices (checked)");
      expect(out).toContain("same rows as the hub's (checked)");
      expect(out).toContain("the same events (checked)");
      expect(out).toMatch(/smoke mode: tiny sizes/);
    },
  );

  it("go on past a failed suite and exit 1 at the end, naming it", { timeout: 120_000 }, async () => {
    // A size no suite can run with fails `sites` at its start; `devices` after it still runs.
    const { code, out } = await bench({ BENCH_SITES: "-1" }, ["sites", "devices"]);
    expect(results(out)).toEqual({ sites: "FAILED", devices: "ok" });
    expect(out).toMatch(/BENCH_SITES: a non-negative number/);
    expect(out).toMatch(/^1 passed, 1 failed$/m);
    expect(code).toBe(1);
  });

  it("refuse a suite they do not know with exit 2, listing the suites", { timeout: 60_000 }, async () => {
    const { code, out } = await bench({}, ["site"]);
    expect(code).toBe(2);
    expect(out).toContain(`unknown benchmark site; the suites: ${SUITES.join(", ")}`);
  });
});
