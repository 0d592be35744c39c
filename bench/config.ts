/**
 * Every benchmark's sizes and durations in one place. A full run (`npm run bench`) uses the sizes
 * the figures in docs/benchmarks.md were measured at; the smoke mode (`BENCH_SMOKE=1`, which the
 * test command runs) uses tiny ones, so every suite starts, does its same-work checks (the same
 * rows, the same bytes, the same end state) and prints its figures in seconds. Smoke figures say
 * nothing about speed, and the smoke mode prints no verdict on it. A variable set in the
 * environment wins over both.
 */
export const SMOKE = process.env.BENCH_SMOKE === "1";

/** `name` from the environment (a non-negative number), else the smoke or the full size. */
export function knob(name: string, full: number, smoke: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return SMOKE ? smoke : full;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}: a non-negative number, got ${JSON.stringify(raw)}`);
  return n;
}

/** Seconds of load per side and round (autocannon). */
export const DURATION_S = knob("BENCH_DURATION_S", 10, 1);
/** Seconds of warm-up load before measuring. */
export const WARMUP_S = knob("BENCH_WARMUP_S", 2, 1);
/** Concurrent connections of the load. */
export const CONNECTIONS = knob("BENCH_CONNECTIONS", 10, 2);
/** Rounds of an alternating comparison (a shared machine needs several). */
export const ROUNDS = knob("BENCH_ROUNDS", 3, 1);
/** Demo devices per site (two sites) of the suites that read a large inventory. */
export const DEMO_DEVICES_PER_SITE = knob("BENCH_DEMO_DEVICES_PER_SITE", 25_000, 120);
/** The demo inventory's size, for labels. */
export const DEMO_DEVICES = 2 * DEMO_DEVICES_PER_SITE;
/** Milliseconds a process is left idle before its RSS is read. */
export const IDLE_MS = knob("BENCH_IDLE_MS", 3000, 200);
