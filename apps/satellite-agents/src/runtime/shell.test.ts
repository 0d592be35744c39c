import { describe, expect, it } from "vitest";
import { ConfigError } from "./config.ts";
import { LoopGaveUp } from "./loop.ts";
import { FatalSetupError } from "./setup-retry.ts";
import { runProcess, type ProcessDefinition, type Running } from "./shell.ts";

/** A hub nobody answers at: heartbeats fail (logged), which stops nothing. */
const env = {
  FM_HUB_URL: "http://127.0.0.1:1",
  FM_CLIENT_ID: "ironic-agent-sys1-test",
  FM_CLIENT_SECRET: "s3cret-value",
  FM_SITE: "test1",
  METRICS_PORT: "0",
  METRICS_HOST: "127.0.0.1",
  LOG_LEVEL: "fatal",
  FM_HEARTBEAT_INTERVAL_S: "3600",
};

function definition(
  start: ProcessDefinition<Record<string, never>>["start"],
  over: Partial<ProcessDefinition<Record<string, never>>> = {},
): ProcessDefinition<Record<string, never>> {
  return { kind: "openstack", title: "test agent", env: {}, start, ...over };
}

describe("the process shell's exit codes", () => {
  it("2 for a configuration it cannot run with, before anything starts", async () => {
    let started = 0;
    const start = async (): Promise<Running> => (started++, { loops: [], done: Promise.resolve() });
    expect(await runProcess(definition(start), { ...env, FM_SITE: "Not A Slug" })).toBe(2);
    const rule = () => {
      throw new ConfigError(["FM_SITE: not this one"]);
    };
    expect(await runProcess(definition(start, { checkConfig: rule }), env)).toBe(2);
    expect(started).toBe(0);
    // Configuration found wrong during setup (a broken clouds.yaml) is the same.
    expect(
      await runProcess(
        definition(async () => rule()),
        env,
      ),
    ).toBe(2);
  });

  it("0 once the work stopped after SIGTERM, which the work sees as its signal", async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const code = runProcess(
      definition(async (ctx) => {
        started();
        const done = new Promise<void>((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
            resolve();
          }),
        );
        return { loops: [], done };
      }),
      env,
    );
    // Once started, the shell listens for SIGTERM (emitted here: no signal is sent to the test process).
    await running;
    process.emit("SIGTERM", "SIGTERM");
    expect(await code).toBe(0);
    expect(aborted).toBe(true);
  });

  it("1 when setup fails for good or the work fails, whether a loop gave up or something broke", async () => {
    const failing = (err: Error) => definition(async () => ({ loops: [], done: Promise.reject(err) }));
    expect(await runProcess(failing(new LoopGaveUp("st", 3)), env)).toBe(1);
    expect(await runProcess(failing(new Error("worker crashed")), env)).toBe(1);
    const unknownSite = definition(async () => {
      throw new FatalSetupError("site 'test1' does not exist in the hub");
    });
    expect(await runProcess(unknownSite, env)).toBe(1);
  });

  it("retries a setup step with backoff, then gives up with exit 1 after FM_MAX_CONSECUTIVE_FAILURES", async () => {
    const attempts: number[] = [];
    const flaky = definition(async (ctx) => {
      await ctx.retry("connect", async () => {
        attempts.push(performance.now());
        throw new Error("ECONNREFUSED");
      });
      return { loops: [], done: Promise.resolve() };
    });
    expect(
      await runProcess(flaky, {
        ...env,
        FM_MAX_CONSECUTIVE_FAILURES: "3",
        FM_BACKOFF_BASE_MS: "100",
        FM_BACKOFF_MAX_S: "10",
      }),
    ).toBe(1);
    expect(attempts).toHaveLength(3);
    // The backoff: half to all of 100 ms after the first failure, of 200 ms after the second (equal
    // jitter, doubling), so never at once; and the step is retried, not left waiting (2 s is far).
    const gaps = [attempts[1]! - attempts[0]!, attempts[2]! - attempts[1]!];
    expect(gaps[0]).toBeGreaterThanOrEqual(49);
    expect(gaps[1]).toBeGreaterThanOrEqual(99);
    for (const gap of gaps) expect(gap).toBeLessThan(2000);
  });
});
