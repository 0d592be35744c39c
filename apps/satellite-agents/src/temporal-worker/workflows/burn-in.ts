/**
 * BURN_IN: the job's hardware tests on the GPU partition. One SLURM batch job per device runs its
 * single-node tests (pinned to its node); each multi-node test is one SLURM job over every
 * device's node, allowed only at a site with a topology region (the topology-sync eligibility
 * gate). Once all ended, the results step reads each test's outcome and figures, uploads the
 * artifacts and reports the results to the hub; the burn-in fails when any device failed a test.
 * A burn-in that fails or is cancelled cancels every SLURM job it submitted.
 *
 * Workflows started before tests and results existed (no RESULTS_PATCH marker in their history)
 * keep their old course: one job per device, judged by its SLURM exit code.
 */
import { ApplicationFailure, CancellationScope, patched } from "@temporalio/workflow";
import {
  FOLDER_BY_ID_PATCH,
  WORKFLOW_STEPS,
  burnInAllocationFolder,
  burnInDeviceFolder,
  isMultiNodeTest,
  type DevicePlan,
  type JobPlan,
  type JobWorkflowInput,
  type JobWorkflowResult,
} from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";
import { quick, waiting } from "./proxies.ts";
import { MESSAGE_MAX, Steps, eachDevice, preflight, skipped } from "./steps.ts";

type SlurmEnd = Awaited<ReturnType<Activities["slurmWait"]>>;
type DeviceResult = Awaited<ReturnType<Activities["burnInCollect"]>>;
type BurnInTest = NonNullable<JobWorkflowInput<"BURN_IN">["params"]["tests"]>[number];

export const RESULTS_PATCH = "burn-in-results";

/** One SLURM job of the burn-in: a device's single-node tests, or a multi-node test over all devices. */
interface Run {
  label: string;
  devices: DevicePlan[];
  tests: BurnInTest[];
  folder: string;
  submit: () => Promise<number>;
}

export async function burnInWorkflow(input: JobWorkflowInput<"BURN_IN">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.BURN_IN);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const withResults = patched(RESULTS_PATCH);
  if (!plan.site.slurmEnabled) refuse(steps, `SLURM is not enabled at ${plan.site.slug}: burn-in runs through SLURM`);
  const runs = withResults ? runsOf(input, plan, patched(FOLDER_BY_ID_PATCH)) : legacyRuns(input, plan.devices);
  if (withResults && (input.params.tests ?? []).some(isMultiNodeTest) && !plan.site.topologyRegion)
    refuse(
      steps,
      `${plan.site.slug} has no topology region: the topology-sync eligibility gate allows multi-node burn-ins only at a topology target`,
    );
  // Every SLURM job submitted is either waited for or cancelled: a failure of the step or of
  // the wait cancels what was submitted.
  const submitted: number[] = [];
  const cleanUp = () => CancellationScope.nonCancellable(() => quick.slurmCancel([...submitted]));
  let ids: number[];
  try {
    ids = await submitAll(steps, runs, submitted);
  } catch (err) {
    if (submitted.length) await cleanUp();
    throw err;
  }
  let ends: SlurmEnd[];
  try {
    ends = await waitAll(steps, runs, ids);
  } catch (err) {
    await cleanUp();
    throw err;
  }
  if (!withResults) {
    steps.skip("results", "burn-in started before results were kept");
    const failed = ends.filter((r) => r.state !== "COMPLETED" || r.exitCode !== 0);
    if (failed.length) {
      const message = `burn-in failed on ${failed.map((r) => `${r.device} (SLURM job ${r.slurmJobId} ${r.state}, exit code ${r.exitCode ?? "unknown"})`).join(", ")}`;
      steps.step("slurm-run").status = "FAILED";
      throw steps.failure("slurm-run", message);
    }
    return steps.snapshot();
  }
  const results = await collectAll(steps, input, plan, runs, ends);
  const failed = results.filter((r) => r.status === "FAILED");
  if (failed.length) {
    const name = (id: string) => plan.devices.find((d) => d.deviceId === id)!.name;
    const message = `burn-in failed on ${failed
      .map(
        (r) =>
          `${name(r.deviceId)} (${r.tests
            .filter((t) => !t.passed)
            .map((t) => t.message ?? t.test)
            .join("; ")})`,
      )
      .join(", ")}`;
    steps.step("results").status = "FAILED";
    throw steps.failure("results", message);
  }
  return steps.snapshot();
}

/** Fails the burn-in at its submit step, before anything was submitted. */
function refuse(steps: Steps, message: string): never {
  const s = steps.step("slurm-submit");
  Object.assign(s, { status: "FAILED", message: message.slice(0, MESSAGE_MAX), finishedAt: new Date().toISOString() });
  throw steps.failure("slurm-submit", message, ApplicationFailure.nonRetryable(message, "NotConfigured"));
}

/**
 * The SLURM jobs of a burn-in: each device's single-node tests, then one job per multi-node test.
 * `byId`: each device's folder is named by its id (a burn-in that started before: by its name).
 */
function runsOf(input: JobWorkflowInput<"BURN_IN">, plan: JobPlan, byId: boolean): Run[] {
  const { durationMinutes, partition } = input.params;
  const tests: BurnInTest[] = input.params.tests ?? ["hardware-tests"];
  const base = { jobId: input.jobId, jobName: input.jobName, durationMinutes, ...(partition ? { partition } : {}) };
  const single = tests.filter((t) => !isMultiNodeTest(t));
  const runs: Run[] = single.length
    ? plan.devices.map((d) => {
        const folder = byId ? burnInDeviceFolder(input.jobName, d.deviceId) : `${input.jobName}/${d.name}`;
        return {
          label: d.name,
          devices: [d],
          tests: single,
          folder,
          // A burn-in that started before folders by id lets the activity name it (by the device's name).
          submit: () => quick.slurmSubmitBurnIn({ ...base, device: d, tests: single, ...(byId ? { folder } : {}) }),
        };
      })
    : [];
  for (const test of tests.filter(isMultiNodeTest))
    runs.push({
      label: test,
      devices: plan.devices,
      tests: [test],
      folder: burnInAllocationFolder(input.jobName, test),
      submit: () => quick.slurmSubmitMultiNode({ ...base, devices: plan.devices, test }),
    });
  return runs;
}

/** The course of a burn-in started before results were kept: one job per device, no tests. */
function legacyRuns(input: JobWorkflowInput<"BURN_IN">, devices: DevicePlan[]): Run[] {
  const { durationMinutes, partition } = input.params;
  return devices.map((d) => ({
    label: d.name,
    devices: [d],
    tests: [],
    folder: "",
    submit: () =>
      quick.slurmSubmitBurnIn({
        jobId: input.jobId,
        jobName: input.jobName,
        device: d,
        durationMinutes,
        ...(partition ? { partition } : {}),
      }),
  }));
}

/**
 * slurm-submit: every run's batch job, its id added to `submitted` as it lands. Not cut short by
 * a cancellation: a submit in flight would still create its job.
 */
function submitAll(steps: Steps, runs: Run[], submitted: number[]): Promise<number[]> {
  return CancellationScope.nonCancellable(() =>
    steps.run(
      "slurm-submit",
      (tick) =>
        each(runs, tick, async (r) => {
          const id = await r.submit();
          submitted.push(id);
          return id;
        }),
      (ids) => `SLURM job(s) ${ids.join(", ")}`.slice(0, MESSAGE_MAX),
    ),
  );
}

/** slurm-run: waits for each run's job (`ids` in the order of `runs`) to end. */
function waitAll(steps: Steps, runs: Run[], ids: number[]): Promise<SlurmEnd[]> {
  return steps.run(
    "slurm-run",
    (tick) => each(runs, tick, (r) => waiting.slurmWait({ slurmJobId: ids[runs.indexOf(r)]!, device: r.label })),
    (rs) =>
      rs
        .map((r) => `${r.device}: SLURM job ${r.slurmJobId} ${r.state} exit ${r.exitCode ?? "?"}`)
        .join("; ")
        .slice(0, MESSAGE_MAX),
  );
}

/** results: every device's outcome per test (from each run it took part in), reported to the hub. */
function collectAll(
  steps: Steps,
  input: JobWorkflowInput<"BURN_IN">,
  plan: JobPlan,
  runs: Run[],
  ends: SlurmEnd[],
): Promise<DeviceResult[]> {
  return steps.run(
    "results",
    async (tick) => {
      const results = await eachDevice(plan.devices, tick, async (d) => {
        const parts = await Promise.all(
          runs
            .filter((r) => r.devices.includes(d))
            .map((r) =>
              quick.burnInCollect({
                deviceId: d.deviceId,
                folder: r.folder,
                tests: r.tests,
                slurm: ends[runs.indexOf(r)]!,
              }),
            ),
        );
        const tests = parts.flatMap((p) => p.tests);
        return {
          deviceId: d.deviceId,
          status: tests.every((t) => t.passed) ? "PASSED" : "FAILED",
          tests,
        } satisfies DeviceResult;
      });
      await quick.burnInReport({ jobId: input.jobId, results });
      return results;
    },
    (rs) =>
      rs
        .map((r) => `${plan.devices.find((d) => d.deviceId === r.deviceId)!.name}: ${r.status}`)
        .join("; ")
        .slice(0, MESSAGE_MAX),
  );
}

/** Runs `fn` for every run at once, counting finished runs as the step's progress. */
async function each<T>(runs: Run[], tick: (done: number, total: number) => void, fn: (r: Run) => Promise<T>) {
  let done = 0;
  tick(0, runs.length);
  return Promise.all(
    runs.map(async (r) => {
      const v = await fn(r);
      tick(++done, runs.length);
      return v;
    }),
  );
}
