/**
 * The burn-in workflow on a real Temporal dev server, with canned activities (the activities
 * themselves are tested against real peers in ../activities/*.int.test.ts, and everything
 * together in test/jobs.e2e.test.ts): what a burn-in does with the SLURM jobs it submitted when it
 * fails or is cancelled halfway, and that messages stay within what the hub keeps.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowFailedError, WorkflowHandle } from "@temporalio/client";
import type { Client } from "@temporalio/client";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { Worker } from "@temporalio/worker";
import { JOB_WORKFLOWS, type JobPlan, type JobWorkflowInput, type StepFailureDetails } from "@fm/domain/workflows";
import { eventually } from "@fm/test-support/wait";
import type { Activities } from "../activities/index.ts";
import { testDevice, useTemporal, WORKFLOWS_PATH } from "../workflow-testing.ts";

const temporal = useTemporal();
let queue = 0;

const device = testDevice;
const plan: JobPlan = {
  site: { slug: "t1", slurmEnabled: true, configureDhcp: false, platformClassActivityReady: false },
  devices: [device(1), device(2)],
};

/** Runs one workflow on its own task queue with these activities; `during` may act on the handle. */
async function runWorkflow(
  kind: "BURN_IN",
  activities: Partial<Activities>,
  during?: (h: ReturnType<Client["workflow"]["getHandle"]>) => Promise<void>,
  params: JobWorkflowInput<"BURN_IN">["params"] = { durationMinutes: 1, tests: ["hardware-tests"] },
  jobPlan: JobPlan = plan,
) {
  const taskQueue = `wf-test-${++queue}`;
  const worker = await Worker.create({
    connection: temporal.native,
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: { preflight: async () => jobPlan, ...activities },
  });
  const input: JobWorkflowInput<"BURN_IN"> = {
    jobId: `0190a5b4-2222-7000-8000-0000000000${String(queue).padStart(2, "0")}`,
    jobName: `burn-in-test-${queue}`,
    kind,
    params,
  };
  return worker.runUntil(async () => {
    const handle = await temporal.client.workflow.start(JOB_WORKFLOWS[kind], {
      workflowId: `wf-test-${queue}`,
      taskQueue,
      args: [input],
    });
    await during?.(handle);
    return handle.result().then(
      (r) => ({ ok: true as const, result: r }),
      (err: unknown) => ({ ok: false as const, err }),
    );
  });
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>["events"]>[number];

/**
 * Called from a canned activity: resolves once its workflow's history holds `count` events that
 * `match`, heartbeating while it polls (the workflows give activities a heartbeat timeout).
 */
async function untilHistory(match: (e: HistoryEvent) => boolean, count = 1): Promise<void> {
  const ctx = Context.current();
  const workflowId = ctx.info.workflowExecution?.workflowId;
  if (!workflowId) throw new Error("not an activity of a workflow");
  const handle = temporal.client.workflow.getHandle(workflowId);
  await eventually(
    async () => {
      ctx.heartbeat();
      const { events } = await handle.fetchHistory();
      if ((events ?? []).filter(match).length < count) throw new Error("not in the workflow's history yet");
    },
    30_000,
    50,
  );
}

describe("burn-in workflow and the SLURM jobs it submitted", () => {
  it("a submit failing for one device cancels the SLURM job already submitted for the other", async () => {
    const cancelled: number[][] = [];
    const outcome = await runWorkflow("BURN_IN", {
      slurmSubmitBurnIn: async (a) => {
        if (a.device.name === "gpu002") {
          // gpu001's job is in first: its submit completed (the second completion, after preflight).
          await untilHistory((e) => Boolean(e.activityTaskCompletedEventAttributes), 2);
          throw ApplicationFailure.nonRetryable("SLURM has no node gpu002", "SourceRejected");
        }
        return 41;
      },
      slurmCancel: async (ids) => void cancelled.push(ids),
    });
    expect(outcome.ok).toBe(false);
    const failure = (outcome as { err: WorkflowFailedError }).err.cause as ApplicationFailure;
    expect(failure.message).toBe("slurm-submit: SLURM has no node gpu002");
    expect((failure.details![0] as StepFailureDetails).step).toBe("slurm-submit");
    expect(cancelled).toEqual([[41]]);
  }, 60_000);

  it("cancelled while its submits are in flight, it lets them land and cancels every one of them", async () => {
    const cancelled: number[][] = [];
    let submitting = 0;
    let bothSubmitting!: () => void;
    const inFlight = new Promise<void>((resolve) => (bothSubmitting = resolve));
    const outcome = await runWorkflow(
      "BURN_IN",
      {
        slurmSubmitBurnIn: async (a) => {
          if (++submitting === 2) bothSubmitting();
          // Still in flight when the cancel arrives: they land only once it is in the history.
          await untilHistory((e) => Boolean(e.workflowExecutionCancelRequestedEventAttributes));
          return a.device.name === "gpu001" ? 51 : 52;
        },
        slurmWait: async () => {
          throw new Error("a cancelled burn-in must not wait for its jobs");
        },
        slurmCancel: async (ids) => void cancelled.push([...ids].sort()),
      },
      async (h) => {
        await inFlight;
        await h.cancel();
      },
    );
    expect(outcome.ok).toBe(false);
    expect((outcome as { err: WorkflowFailedError }).err.cause?.name).toBe("CancelledFailure");
    expect(cancelled).toEqual([[51, 52]]);
  }, 60_000);

  it("a wait that fails cancels the SLURM jobs still running; a huge error message is cut to what the hub keeps", async () => {
    const cancelled: number[][] = [];
    const outcome = await runWorkflow("BURN_IN", {
      slurmSubmitBurnIn: async (a) => (a.device.name === "gpu001" ? 61 : 62),
      slurmWait: async (a) => {
        if (a.device === "gpu001")
          throw ApplicationFailure.nonRetryable(`SLURM no longer knows job 61 ${"x".repeat(10_000)}`, "SourceRejected");
        for (;;) {
          Context.current().heartbeat();
          await Context.current().sleep(100);
        }
      },
      slurmCancel: async (ids) => void cancelled.push([...ids].sort()),
    });
    expect(outcome.ok).toBe(false);
    const failure = (outcome as { err: WorkflowFailedError }).err.cause as ApplicationFailure;
    expect(failure.message.startsWith("slurm-run: SLURM no longer knows job 61")).toBe(true);
    expect(failure.message.length).toBeLessThanOrEqual(2000);
    const steps = (failure.details![0] as StepFailureDetails).steps;
    expect(steps.every((s) => (s.message ?? "").length <= 2000)).toBe(true);
    expect(cancelled).toEqual([[61, 62]]);
  }, 60_000);
});

type Result = Awaited<ReturnType<Activities["burnInCollect"]>>;
const testResult = (test: Result["tests"][number]["test"], passed: boolean): Result["tests"][number] => ({
  test,
  passed,
  exitCode: passed ? 0 : 1,
  image: `/images/${test}.sqsh`,
  architecture: "x86_64",
  figures: { gpus: [], xids: [], reasons: passed ? [] : ["GPU 1 - GPU is throttled"] },
  ...(passed ? {} : { message: `${test} exited 1; GPU 1 - GPU is throttled` }),
  artifacts: [],
});

describe("burn-in results", () => {
  it("collects every device's results, reports them to the hub, and fails naming the device and test that failed", async () => {
    const reported: Result[][] = [];
    const collected: { folder: string; tests: string[] }[] = [];
    const submittedTo: (string | undefined)[] = [];
    const [gpu001, gpu002] = plan.devices.map((d) => d.deviceId);
    const outcome = await runWorkflow(
      "BURN_IN",
      {
        slurmSubmitBurnIn: async (a) => {
          submittedTo.push(a.folder);
          return a.device.name === "gpu001" ? 71 : 72;
        },
        slurmWait: async (a) => ({ device: a.device, slurmJobId: a.slurmJobId, state: "COMPLETED", exitCode: 0 }),
        burnInCollect: async (a) => {
          collected.push({ folder: a.folder, tests: a.tests });
          const bad = a.deviceId === gpu002;
          return {
            deviceId: a.deviceId,
            status: bad ? "FAILED" : "PASSED",
            tests: [testResult("hardware-tests", true), testResult("gpu-fryer", !bad)],
          };
        },
        burnInReport: async (a) => void reported.push(a.results),
        slurmCancel: async () => {},
      },
      undefined,
      { durationMinutes: 1, tests: ["hardware-tests", "gpu-fryer"] },
    );
    expect(outcome.ok).toBe(false);
    const failure = (outcome as { err: WorkflowFailedError }).err.cause as ApplicationFailure;
    expect(failure.message).toBe("results: burn-in failed on gpu002 (gpu-fryer exited 1; GPU 1 - GPU is throttled)");
    // Each device's folder is named by its id, never its NetBox name; its jobs write where it is read.
    const folders = [`burn-in-test-4/${gpu001}`, `burn-in-test-4/${gpu002}`].sort();
    expect(collected.map((c) => c.folder).sort()).toEqual(folders);
    expect(submittedTo.sort()).toEqual(folders);
    expect(collected[0]!.tests).toEqual(["hardware-tests", "gpu-fryer"]);
    expect(reported).toHaveLength(1);
    expect(reported[0]!.map((r) => r.status)).toEqual(["PASSED", "FAILED"]);
    const steps = (failure.details![0] as StepFailureDetails).steps;
    expect(steps.find((x) => x.name === "results")).toMatchObject({ status: "FAILED" });
  }, 60_000);

  it("a multi-node test is refused at a site with no topology region, before anything is submitted", async () => {
    let submits = 0;
    const outcome = await runWorkflow(
      "BURN_IN",
      {
        slurmSubmitBurnIn: async () => ++submits,
        slurmSubmitMultiNode: async () => ++submits,
      },
      undefined,
      { durationMinutes: 1, tests: ["hardware-tests", "nvloom"] },
    );
    expect(outcome.ok).toBe(false);
    const failure = (outcome as { err: WorkflowFailedError }).err.cause as ApplicationFailure;
    expect(failure.message).toMatch(/^slurm-submit: t1 has no topology region: the topology-sync eligibility gate/);
    expect(submits).toBe(0);
  }, 60_000);

  it("at a topology target, a multi-node test is one SLURM job over every device, its result each device's", async () => {
    const multi: { devices: string[]; test: string }[] = [];
    const collected: { deviceId: string; folder: string }[] = [];
    const reported: Result[][] = [];
    const outcome = await runWorkflow(
      "BURN_IN",
      {
        slurmSubmitMultiNode: async (a) => {
          multi.push({ devices: a.devices.map((d) => d.name), test: a.test });
          return 81;
        },
        slurmWait: async (a) => ({ device: a.device, slurmJobId: a.slurmJobId, state: "COMPLETED", exitCode: 0 }),
        burnInCollect: async (a) => {
          collected.push({ deviceId: a.deviceId, folder: a.folder });
          return { deviceId: a.deviceId, status: "PASSED", tests: [testResult("nvloom", true)] };
        },
        burnInReport: async (a) => void reported.push(a.results),
      },
      undefined,
      { durationMinutes: 1, tests: ["nvloom"] },
      { ...plan, site: { ...plan.site, topologyRegion: "glo1" } },
    );
    expect(outcome.ok).toBe(true);
    expect(multi).toEqual([{ devices: ["gpu001", "gpu002"], test: "nvloom" }]);
    expect(new Set(collected.map((c) => c.folder))).toEqual(new Set(["burn-in-test-6/allocation-nvloom"]));
    expect(reported[0]!.map((r) => [r.status, r.tests.map((t) => t.test)])).toEqual([
      ["PASSED", ["nvloom"]],
      ["PASSED", ["nvloom"]],
    ]);
  }, 60_000);
});
