/**
 * BURN_IN: one SLURM batch job per device, pinned to its node, and waiting for all of them. A
 * burn-in that fails or is cancelled cancels every SLURM job it submitted.
 */
import { ApplicationFailure, CancellationScope } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type DevicePlan, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";
import { quick, waiting } from "./proxies.ts";
import { MESSAGE_MAX, Steps, eachDevice, preflight, skipped } from "./steps.ts";

type BurnInResult = Awaited<ReturnType<Activities["slurmWait"]>>;

export async function burnInWorkflow(input: JobWorkflowInput<"BURN_IN">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.BURN_IN);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  if (!plan.site.slurmEnabled) {
    await steps.run("slurm-submit", () =>
      Promise.reject(
        ApplicationFailure.nonRetryable(
          `SLURM is not enabled at ${plan.site.slug}: burn-in runs through SLURM`,
          "NotConfigured",
        ),
      ),
    );
  }
  // Every SLURM job submitted is either waited for or cancelled: a failure of the step or of
  // the wait cancels what was submitted.
  const submitted: number[] = [];
  const cleanUp = () => CancellationScope.nonCancellable(() => quick.slurmCancel([...submitted]));
  let ids: number[];
  try {
    ids = await submitAll(steps, input, plan.devices, submitted);
  } catch (err) {
    if (submitted.length) await cleanUp();
    throw err;
  }
  let results: BurnInResult[];
  try {
    results = await waitAll(steps, plan.devices, ids);
  } catch (err) {
    await cleanUp();
    throw err;
  }
  const failed = results.filter((r) => r.state !== "COMPLETED" || r.exitCode !== 0);
  if (failed.length) {
    const message = `burn-in failed on ${failed.map((r) => `${r.device} (SLURM job ${r.slurmJobId} ${r.state}, exit code ${r.exitCode ?? "unknown"})`).join(", ")}`;
    steps.step("slurm-run").status = "FAILED";
    throw steps.failure("slurm-run", message);
  }
  return steps.snapshot();
}

/**
 * slurm-submit: one batch job per device, its id added to `submitted` as it lands. Not cut short
 * by a cancellation: a submit in flight would still create its job.
 */
function submitAll(
  steps: Steps,
  input: JobWorkflowInput<"BURN_IN">,
  devices: DevicePlan[],
  submitted: number[],
): Promise<number[]> {
  const { durationMinutes, partition } = input.params;
  return CancellationScope.nonCancellable(() =>
    steps.run(
      "slurm-submit",
      (tick) =>
        eachDevice(devices, tick, async (d) => {
          const id = await quick.slurmSubmitBurnIn({
            jobId: input.jobId,
            jobName: input.jobName,
            device: d,
            durationMinutes,
            ...(partition ? { partition } : {}),
          });
          submitted.push(id);
          return id;
        }),
      (ids) => `SLURM job(s) ${ids.join(", ")}`.slice(0, MESSAGE_MAX),
    ),
  );
}

/** slurm-run: waits for each device's job (`ids` in the order of `devices`) to end. */
function waitAll(steps: Steps, devices: DevicePlan[], ids: number[]): Promise<BurnInResult[]> {
  return steps.run(
    "slurm-run",
    (tick) =>
      eachDevice(devices, tick, (d) => waiting.slurmWait({ slurmJobId: ids[devices.indexOf(d)]!, device: d.name })),
    (rs) =>
      rs
        .map((r) => `${r.device}: SLURM job ${r.slurmJobId} ${r.state} exit ${r.exitCode ?? "?"}`)
        .join("; ")
        .slice(0, MESSAGE_MAX),
  );
}
