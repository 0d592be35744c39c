/**
 * The REPAIR workflow's re-test on a real Temporal dev server, with canned activities (the
 * activities are tested against real peers in ../activities/*.int.test.ts, and everything together
 * in test/repair.e2e.test.ts): how it judges the re-test, and that a device whose cordon was lifted
 * is cordoned again whenever the re-test does not complete.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowFailedError } from "@temporalio/client";
import type { Client } from "@temporalio/client";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { Worker } from "@temporalio/worker";
import type { BurnInDeviceResult, JobCordon } from "@fm/domain";
import {
  JOB_WORKFLOWS,
  OPERATOR_SIGNAL,
  PROGRESS_QUERY,
  WAITING_FOR_OPERATOR,
  type DevicePlan,
  type JobPlan,
  type JobWorkflowInput,
  type OperatorSignal,
  type StepFailureDetails,
  type WorkflowProgress,
} from "@fm/domain/workflows";
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
const repaired: OperatorSignal = {
  outcome: "repaired",
  note: null,
  signalledBy: "ops",
  signalledAt: "2026-12-03T12:00:00.000Z",
};

/** What the canned activities saw: the hub's cordons in order, results reported, jobs cancelled. */
interface Seen {
  cordons: JobCordon[][];
  reported: BurnInDeviceResult[][];
  cancelled: number[][];
  released: string[];
}

const passedResult = (deviceId: string): BurnInDeviceResult => ({
  deviceId,
  status: "PASSED",
  tests: [
    {
      test: "hardware-tests",
      passed: true,
      exitCode: 0,
      image: null,
      architecture: "x86_64",
      figures: { gpus: [], xids: [], reasons: [] },
      artifacts: [],
    },
  ],
});

/**
 * Runs a REPAIR on its own task queue: the operator signals `repaired` once the job waits for
 * them; `during` may act on the handle after that. `activities` replace the canned ones.
 */
async function runRepair(
  activities: Partial<Activities>,
  during?: (h: ReturnType<Client["workflow"]["getHandle"]>) => Promise<void>,
) {
  const seen: Seen = { cordons: [], reported: [], cancelled: [], released: [] };
  const taskQueue = `repair-test-${++queue}`;
  const canned: Partial<Activities> = {
    preflight: async () => plan,
    slurmCheckNodesExist: async () => {},
    hubCordon: async (_jobId, cordons) => void seen.cordons.push(cordons),
    slurmWaitDrain: async (d, drained) => `${d.name} ${drained ? "drained" : "back in service"}`,
    ironicMaintenance: async (d) => `${d.name} in maintenance`,
    slurmSubmitBurnIn: async (a) => Number(a.device.netboxId) + 100,
    slurmWait: async (a) => ({ device: a.device, slurmJobId: a.slurmJobId, state: "COMPLETED", exitCode: 0 }),
    burnInCollect: async (a) => passedResult(a.deviceId),
    burnInReport: async (a) => void seen.reported.push(a.results),
    slurmCancel: async (ids) => void seen.cancelled.push(ids),
    ironicEndMaintenance: async (d) => void seen.released.push(d.name),
    recordOnHub: async () => {},
    ...activities,
  };
  const worker = await Worker.create({
    connection: temporal.native,
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: canned,
  });
  const input: JobWorkflowInput<"REPAIR"> = {
    jobId: `0190a5b4-3333-7000-8000-0000000000${String(queue).padStart(2, "0")}`,
    jobName: `repair-test-${queue}`,
    kind: "REPAIR",
    params: { ticket: "OPS-9", description: "GPU 3 fell off the bus", burnInMinutes: 1 },
  };
  const outcome = await worker.runUntil(async () => {
    const handle = await temporal.client.workflow.start(JOB_WORKFLOWS.REPAIR, {
      workflowId: `repair-test-${queue}`,
      taskQueue,
      args: [input],
    });
    await eventually(
      async () => {
        const p = await handle.query<WorkflowProgress>(PROGRESS_QUERY);
        if (p.steps.find((s) => s.name === "operator")?.message !== WAITING_FOR_OPERATOR)
          throw new Error("not waiting");
      },
      30_000,
      50,
    );
    await handle.signal(OPERATOR_SIGNAL, repaired);
    await during?.(handle);
    return handle.result().then(
      (r) => ({ ok: true as const, result: r }),
      (err: unknown) => ({ ok: false as const, err }),
    );
  });
  return { outcome, seen, input };
}

const failureOf = (o: { ok: true } | { ok: false; err: unknown }) => {
  if (o.ok) throw new Error("the repair succeeded");
  return (o.err as WorkflowFailedError).cause as ApplicationFailure;
};
const cordonedAgain = (reason: string, ...ds: DevicePlan[]) =>
  ds.map((d) => ({ deviceId: d.deviceId, cordoned: true, reason }));

describe("REPAIR's re-test", () => {
  it("passed: its results are reported to the hub as the devices' burn-in, and the devices released", async () => {
    const folders: { submitted: (string | undefined)[]; collected: string[] } = { submitted: [], collected: [] };
    const { outcome, seen, input } = await runRepair({
      slurmSubmitBurnIn: async (a) => {
        folders.submitted.push(a.folder);
        return Number(a.device.netboxId) + 100;
      },
      burnInCollect: async (a) => {
        folders.collected.push(a.folder);
        return passedResult(a.deviceId);
      },
    });
    expect(outcome.ok).toBe(true);
    expect(seen.reported).toEqual([[passedResult(device(1).deviceId), passedResult(device(2).deviceId)]]);
    // Each device's results folder is named by its id (never its NetBox name), written where it is read.
    const byId = [device(1), device(2)].map((d) => `${input.jobName}/${d.deviceId}`).sort();
    expect(folders.submitted.sort()).toEqual(byId);
    expect(folders.collected.sort()).toEqual(byId);
    expect(seen.cordons.map((c) => c.map((x) => x.cordoned))).toEqual([
      [true, true],
      [false, false],
    ]);
    // Released side by side: in whatever order they end.
    expect([...seen.released].sort()).toEqual(["gpu001", "gpu002"]);
  }, 60_000);

  it("fails a device on its results (an Xid logged though the job exited 0), reports them and cordons it again", async () => {
    const xid: BurnInDeviceResult = {
      deviceId: device(2).deviceId,
      status: "FAILED",
      tests: [
        {
          ...passedResult(device(2).deviceId).tests[0]!,
          passed: false,
          figures: {
            gpus: [],
            xids: [{ pciAddress: "0000:1b:00", code: 79, message: "fell off the bus" }],
            reasons: [],
          },
          message: "hardware-tests exited 0; Xid 79 logged",
        },
      ],
    };
    const { outcome, seen } = await runRepair({
      burnInCollect: async (a) => (a.deviceId === xid.deviceId ? xid : passedResult(a.deviceId)),
    });
    const failure = failureOf(outcome);
    expect(failure.message).toBe(
      "burn-in: re-test failed on gpu002 (hardware-tests exited 0; Xid 79 logged); cordoned again",
    );
    expect((failure.details![0] as StepFailureDetails).step).toBe("burn-in");
    expect(seen.reported).toEqual([[passedResult(device(1).deviceId), xid]]);
    expect(seen.cordons.at(-1)).toEqual(
      cordonedAgain("repair OPS-9: GPU 3 fell off the bus: re-test failed", device(2)),
    );
    expect(seen.released).toEqual([]);
  }, 60_000);

  it("a re-test that cannot be submitted (a worker without the burn-in output folder) cordons every device again", async () => {
    const { outcome, seen } = await runRepair({
      slurmSubmitBurnIn: async () => {
        throw ApplicationFailure.nonRetryable("this worker has no FM_BURNIN_OUTPUT_DIR", "NotConfigured");
      },
    });
    const failure = failureOf(outcome);
    expect(failure.message).toBe("burn-in: this worker has no FM_BURNIN_OUTPUT_DIR");
    expect(seen.cordons.map((c) => c.map((x) => x.cordoned))).toEqual([
      [true, true],
      [false, false],
      [true, true],
    ]);
    expect(seen.cordons.at(-1)).toEqual(
      cordonedAgain("repair OPS-9: GPU 3 fell off the bus: re-test did not complete", device(1), device(2)),
    );
    expect(seen.reported).toEqual([]);
    expect(seen.released).toEqual([]);
  }, 60_000);

  it("cancelled while the re-test runs, it cancels the SLURM jobs and cordons every device again", async () => {
    let waits = 0;
    const { outcome, seen } = await runRepair(
      {
        slurmWait: async () => {
          waits++;
          // Runs until the cancellation reaches it (the workflow gives waits a heartbeat timeout).
          const ctx = Context.current();
          for (;;) {
            ctx.heartbeat();
            await ctx.sleep(100);
          }
        },
      },
      async (h) => {
        await eventually(
          async () => {
            if (waits < 2) throw new Error("re-test not running yet");
          },
          30_000,
          50,
        );
        await h.cancel();
      },
    );
    expect(outcome.ok).toBe(false);
    expect(seen.cancelled).toHaveLength(1);
    expect([...seen.cancelled[0]!].sort()).toEqual([101, 102]);
    expect(seen.cordons.at(-1)).toEqual(
      cordonedAgain("repair OPS-9: GPU 3 fell off the bus: re-test did not complete", device(1), device(2)),
    );
    expect(seen.released).toEqual([]);
  }, 60_000);
});
