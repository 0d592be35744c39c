/**
 * The SLURM activities under Temporal's MockActivityEnvironment, against a real SLURM
 * (slurmctld, slurmd, slurmrestd): the activities use the real client, and the assertions read
 * the jobs back with scontrol.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { burnInDeviceFolder } from "@fm/domain/workflows";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActivityCancellationDetails, CancelledFailure } from "@temporalio/common";
import type { MockActivityEnvironment } from "@temporalio/testing";
import { SlurmClient } from "@fm/clients";
import {
  scontrolJob,
  setNodeState,
  slurmCommand,
  startSlurm,
  waitForScontrolJob,
  type SlurmPeer,
} from "@fm/test-support/slurm";
import {
  WAITING,
  activityEnv,
  deadEndpoint,
  expectFinal,
  expectRetryable,
  plan,
  rejection,
  run,
} from "./activity-testing.ts";
import type { ActivityDeps } from "./deps.ts";
import { slurmActivities } from "./slurm.ts";

let slurm: SlurmPeer;
let outputDir: string;
beforeAll(async () => {
  slurm = await startSlurm();
  outputDir = await mkdtemp(join(tmpdir(), "fm-burn-in-out-"));
}, 180_000);
afterAll(async () => {
  await slurm?.stop();
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
}, 60_000);

const burnIn = (command: string) => ({
  images: { defaultByArch: {}, defaultScalar: "/images/default.sqsh" },
  command,
  outputDir,
});

/** The SLURM activities as the worker builds them, on the real client; `over` replaces any dependency. */
const activities = (over: Partial<ActivityDeps> = {}) =>
  slurmActivities({
    slurm: new SlurmClient({ baseUrl: slurm.url, user: "root", token: () => slurm.token, backoffMs: 20 }),
    slurmDeviceNamePrefix: "",
    burnIn: burnIn("sleep 1"),
    pollIntervalMs: 100,
    ...over,
  });

/** Every job slurmctld knows with this name (ids), from scontrol. */
async function slurmJobsNamed(name: string): Promise<number[]> {
  const out = await slurmCommand(slurm, "scontrol", ["-o", "show", "job"]);
  return out
    .split("\n")
    .filter((line) => line.includes(` JobName=${name} `))
    .map((line) => Number(/^JobId=(\d+)/.exec(line)?.[1]));
}

describe("SLURM activities", () => {
  it(
    "slurmSubmitBurnIn submits once per job and device, pinned to the node; slurmWait returns COMPLETED and exit code 0",
    async () => {
      const acts = activities();
      const d = plan({ name: "act-burn-ok", slurmNodeName: "gpu001" });
      const args = { jobId: randomUUID(), jobName: `burn-in-ok-${process.pid}`, device: d, durationMinutes: 1 };
      const { result: id } = await run(acts.slurmSubmitBurnIn, args);
      expect((await run(acts.slurmSubmitBurnIn, args)).result).toBe(id);
      const name = `fm-${args.jobName}-${d.name}`;
      expect(await slurmJobsNamed(name)).toEqual([id]);

      const { result, heartbeats } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      expect(result).toEqual({ device: d.name, slurmJobId: id, state: "COMPLETED", exitCode: 0 });
      expect(heartbeats.length).toBeGreaterThan(0);
      expect(await scontrolJob(slurm, id)).toMatchObject({
        name,
        state: "COMPLETED",
        exitCode: "0:0",
        nodeList: "gpu001",
        comment: expect.stringMatching(new RegExp(`^fleet-manager job ${args.jobId}\\s*$`)),
      });
      // Submitting again after the job ended still finds it: no second burn-in.
      expect((await run(acts.slurmSubmitBurnIn, args)).result).toBe(id);
      expect(await slurmJobsNamed(name)).toEqual([id]);
    },
    WAITING,
  );

  it(
    "slurmWait returns FAILED and the command's exit code for a failing burn-in",
    async () => {
      const acts = activities({ burnIn: burnIn("exit 3") });
      const d = plan({ name: "act-burn-fail", slurmNodeName: "gpu002" });
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName: `burn-in-fail-${process.pid}`,
        device: d,
        durationMinutes: 1,
      });
      const { result } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      // The batch job fails when a test does; the test's own exit code is in its folder.
      expect(result).toEqual({ device: d.name, slurmJobId: id, state: "FAILED", exitCode: 1 });
      expect(await scontrolJob(slurm, id)).toMatchObject({ state: "FAILED", exitCode: "1:0" });
      const folder = join(outputDir, `burn-in-fail-${process.pid}`, d.name);
      expect((await readFile(join(folder, "hardware-tests.exit"), "utf8")).trim()).toBe("3");
    },
    WAITING,
  );

  it(
    "a device NetBox names like a path writes its results to the folder named by its id, and its batch output to a file named by the job",
    async () => {
      const acts = activities({ burnIn: burnIn("exit 0") });
      const escape = `fm-slurm-escape-${process.pid}`;
      const d = plan({ name: `../../../../tmp/${escape}`, slurmNodeName: "gpu002" });
      const jobName = `burn-in-names-${process.pid}`;
      const folder = burnInDeviceFolder(jobName, d.deviceId);
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName,
        device: d,
        durationMinutes: 1,
        folder,
      });
      expect((await run(acts.slurmWait, { slurmJobId: id, device: d.name })).result).toMatchObject({
        state: "COMPLETED",
      });
      expect((await readFile(join(outputDir, folder, "hardware-tests.exit"), "utf8")).trim()).toBe("0");
      expect(await readdir(join(outputDir, jobName))).toEqual([d.deviceId]);
      await expect(readdir(`/tmp/${escape}`)).rejects.toThrow(/ENOENT/);
      const job = await scontrolJob(slurm, id);
      expect(job!.fields.StdOut).toBe(`/tmp/fm-${jobName}-${id}.out`);
    },
    WAITING,
  );

  it(
    "slurmWait stopped by a worker shutdown leaves the SLURM job running; cancelled, it cancels the SLURM job",
    async () => {
      const acts = activities({ burnIn: burnIn("sleep 300") });
      const d = plan({ name: "act-burn-cancel", slurmNodeName: "gpu004" });
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName: `burn-in-cancel-${process.pid}`,
        device: d,
        durationMinutes: 10,
      });

      /** An attempt of slurmWait, stopped once it has seen the job RUNNING. */
      const attempt = async (stop: (env: MockActivityEnvironment) => void): Promise<unknown> => {
        const { env } = activityEnv();
        const running = new Promise<void>((resolve) =>
          env.on("heartbeat", (h: { state?: string }) => h.state === "RUNNING" && resolve()),
        );
        const waiting = env.run(acts.slurmWait, { slurmJobId: id, device: d.name });
        // Until then, a settled slurmWait is the failure to report.
        await Promise.race([
          running,
          waiting.then((r) => Promise.reject(new Error(`slurmWait ended before it was stopped: ${JSON.stringify(r)}`))),
        ]);
        stop(env);
        return rejection(waiting);
      };

      // The worker shuts down (a deploy): this attempt fails, and the next one, on another
      // worker, must find the burn-in still running.
      const shutdown = await attempt((env) =>
        env.cancel("WORKER_SHUTDOWN", new ActivityCancellationDetails({ workerShutdown: true })),
      );
      expect(shutdown).toBeInstanceOf(CancelledFailure);
      expect((await scontrolJob(slurm, id))?.state).toBe("RUNNING");

      // The workflow is cancelled: the activity is, and so is the SLURM job.
      expect(await attempt((env) => env.cancel())).toBeInstanceOf(CancelledFailure);
      expect((await waitForScontrolJob(slurm, id, ["CANCELLED"])).state).toBe("CANCELLED");
    },
    WAITING,
  );

  it("a burn-in is not submitted by a worker that could not read its results (no FM_BURNIN_OUTPUT_DIR)", async () => {
    const acts = activities({ burnIn: { images: { defaultByArch: {} }, command: "true" } });
    const args = { jobId: randomUUID(), jobName: `no-output-${process.pid}`, durationMinutes: 1 };
    const d = plan({ slurmNodeName: "gpu003" });
    expectFinal(
      await rejection(run(acts.slurmSubmitBurnIn, { ...args, device: d })),
      "NotConfigured",
      /FM_BURNIN_OUTPUT_DIR/,
    );
    expect(await slurmJobsNamed(`fm-${args.jobName}-${d.name}`)).toEqual([]);
  });

  it("slurmCheckNode finds a device's node by the name prefix until the hub has recorded one; a device outside the prefix has none", async () => {
    const acts = activities({ slurmDeviceNamePrefix: "kef-" });
    // The test cluster's nodes are idle: the check passes and returns the state it read.
    expect((await run(acts.slurmCheckNode, plan({ name: "kef-gpu003" }))).result).toBe("idle");
    // A node name the SLURM agent recorded wins over the prefix rule.
    expect((await run(acts.slurmCheckNode, plan({ name: "kef-renamed", slurmNodeName: "gpu003" }))).result).toBe(
      "idle",
    );
    expectFinal(
      await rejection(run(acts.slurmCheckNode, plan({ name: "kef-gpu999" }))),
      "BadInput",
      "SLURM has no node gpu999",
    );
    expectFinal(
      await rejection(run(acts.slurmCheckNode, plan({ name: "sta-gpu003" }))),
      "BadInput",
      "sta-gpu003 is no SLURM node: its name does not start with kef-",
    );
  });

  it("a SLURM that does not answer is thrown as a retryable error", async () => {
    const dead = await deadEndpoint();
    const acts = activities({
      slurm: new SlurmClient({ baseUrl: dead, user: "root", token: () => "none", maxAttempts: 2, backoffMs: 5 }),
    });
    const d = plan({ slurmNodeName: "gpu001" });
    expectRetryable(
      await rejection(
        run(acts.slurmSubmitBurnIn, { jobId: randomUUID(), jobName: "outage", device: d, durationMinutes: 1 }),
      ),
      "SlurmUnavailableError",
    );
    expectRetryable(await rejection(run(acts.slurmWait, { slurmJobId: 1, device: d.name })), "SlurmUnavailableError");
  });

  it(
    "slurmWaitDrain returns once the drained node runs nothing, and once the drain is gone; slurmCheckNodesExist names unknown nodes",
    async () => {
      const acts = activities({ burnIn: burnIn("sleep 3") });
      const d = plan({ name: "act-drain", slurmNodeName: "gpu003" });
      const args = { jobId: randomUUID(), jobName: `drain-${process.pid}`, device: d, durationMinutes: 1 };
      const { result: id } = await run(acts.slurmSubmitBurnIn, args);
      await waitForScontrolJob(slurm, id, ["RUNNING"]);
      try {
        // Drained while its job runs (DRAINING): the wait ends only after the job did.
        await setNodeState(slurm, "gpu003", "drain", "fleet-manager cordon: repair OPS-7");
        const { result } = await run(acts.slurmWaitDrain, d, true);
        expect(result).toBe("gpu003 drained (fleet-manager cordon: repair OPS-7)");
        expect((await scontrolJob(slurm, id))?.state).toBe("COMPLETED");
        await setNodeState(slurm, "gpu003", "resume");
        expect((await run(acts.slurmWaitDrain, d, false)).result).toBe("gpu003 back in service");
      } finally {
        await setNodeState(slurm, "gpu003", "resume").catch(() => {});
      }
      expectFinal(
        await rejection(run(acts.slurmWaitDrain, plan({ slurmNodeName: "gpu999" }), true)),
        "BadInput",
        /SLURM has no node gpu999/,
      );
      // What a REPAIR checks before it cordons anything.
      await run(acts.slurmCheckNodesExist, [d, plan({ slurmNodeName: "gpu001" })]);
      expectFinal(
        await rejection(run(acts.slurmCheckNodesExist, [d, plan({ slurmNodeName: "gpu998" })])),
        "BadInput",
        /SLURM has no node gpu998$/,
      );
      // A worker that could not re-test the devices refuses the repair before it cordons them.
      expectFinal(
        await rejection(
          run(activities({ burnIn: { ...burnIn("true"), outputDir: undefined } }).slurmCheckNodesExist, [d]),
        ),
        "NotConfigured",
        /no FM_BURNIN_OUTPUT_DIR .*could not re-test/,
      );
    },
    WAITING,
  );
});
