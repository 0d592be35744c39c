/**
 * REPAIR: takes the devices out of service, hands them to an operator, and gives them back once
 * a re-test passes.
 *
 *  cordon → slurm-drain → ironic-maintenance → operator → uncordon → burn-in → release
 *
 * The cordon is the hub's (the site's SLURM agent mirrors it as a drain, the one writer of
 * drains): slurm-drain waits until the node runs nothing. Ironic maintenance carries the repair's
 * own reason, which the OpenStack agent's cordon mirror leaves alone, so it outlives the cordon
 * through the re-test and only the release clears it. The operator step waits for the operator's
 * signal (the hub's `POST /api/v1/jobs/{id}/signal`, forwarded by the workflow agent): `failed`
 * ends the job with the devices still out of service; `repaired` lifts the cordon, waits for the
 * drain to go, and runs the burn-in. A device whose re-test fails is cordoned again.
 *
 * Since RETEST_PATCH the re-test is judged as a burn-in is: its results are collected from the
 * shared output folder and reported to the hub (so the device's last burn-in is this one), and a
 * device fails on what they say (an Xid logged too), not on the SLURM exit code alone. An uncordon
 * or re-test that fails or is cancelled cordons every device again before the job ends, so a
 * device never goes back into service untested. Workflows started before it keep their course.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  patched,
  setHandler,
} from "@temporalio/workflow";
import {
  FOLDER_BY_ID_PATCH,
  OPERATOR_SIGNAL,
  WAITING_FOR_OPERATOR,
  WORKFLOW_STEPS,
  burnInDeviceFolder,
  repairMaintenanceReason,
  repairReason,
  type DevicePlan,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type OperatorSignal,
} from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";
import { quick, waiting } from "./proxies.ts";
import { MESSAGE_MAX, Steps, eachDevice, preflight, skipped } from "./steps.ts";

export const operatorSignal = defineSignal<[OperatorSignal]>(OPERATOR_SIGNAL);

type BurnInResult = Awaited<ReturnType<Activities["slurmWait"]>>;
type DeviceResult = Awaited<ReturnType<Activities["burnInCollect"]>>;

export const RETEST_PATCH = "repair-retest-guard";
/** The re-test's tests: the burn-in's single-node default. */
const RETEST_TESTS = ["hardware-tests"] as const;

export async function repairWorkflow(input: JobWorkflowInput<"REPAIR">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.REPAIR);
  // Registered first: a signal sent while the devices are still being drained is kept. The first
  // one counts; the workflow agent may forward it again after a restart.
  let signal: OperatorSignal | undefined;
  setHandler(operatorSignal, (s) => {
    signal ??= s;
  });
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const { devices, site } = plan;
  const reason = repairReason(input.params);
  const maintenance = repairMaintenanceReason(input.params);
  const cordon = (ds: DevicePlan[], cordoned: boolean, why = reason) =>
    quick.hubCordon(
      input.jobId,
      ds.map((d) => ({ deviceId: d.deviceId, cordoned, ...(cordoned ? { reason: why } : {}) })),
    );

  await steps.run("cordon", async () => {
    // Checked before anything changes: without SLURM there is neither a drain nor a re-test.
    if (!site.slurmEnabled)
      throw ApplicationFailure.nonRetryable(
        `SLURM is not enabled at ${site.slug}: a repair drains the node and re-tests it through SLURM`,
        "NotConfigured",
      );
    // A device SLURM does not know could never be drained: refused before anything is cordoned.
    await quick.slurmCheckNodesExist(devices);
    await cordon(devices, true);
  });
  await steps.run(
    "slurm-drain",
    (tick) => eachDevice(devices, tick, (d) => waiting.slurmWaitDrain(d, true)),
    (r) => r.join("; "),
  );
  await steps.run(
    "ironic-maintenance",
    (tick) => eachDevice(devices, tick, (d) => quick.ironicMaintenance(d, maintenance)),
    (r) => r.join("; "),
  );

  const outcome = await steps.run(
    "operator",
    async () => {
      steps.step("operator").message = WAITING_FOR_OPERATOR;
      await condition(() => signal !== undefined);
      return signal!;
    },
    (s) => `${s.outcome} (${s.signalledBy})${s.note ? `: ${s.note}` : ""}`,
  );
  if (outcome.outcome === "failed") {
    const why = `the operator reported the repair failed${outcome.note ? `: ${outcome.note}` : ""}`;
    for (const name of ["uncordon", "burn-in", "release"]) steps.skip(name, why);
    steps.step("operator").status = "FAILED";
    throw steps.failure("operator", `${why}; the devices stay cordoned, drained and in maintenance`);
  }

  if (!patched(RETEST_PATCH)) {
    await steps.run("uncordon", async (tick) => {
      await cordon(devices, false);
      return eachDevice(devices, tick, (d) => waiting.slurmWaitDrain(d, false));
    });
    const results = await burnIn(steps, input, devices);
    const failed = devices.filter((_, i) => results[i]!.state !== "COMPLETED" || results[i]!.exitCode !== 0);
    if (failed.length) {
      await CancellationScope.nonCancellable(() => cordon(failed, true, `${reason}: re-test failed`));
      steps.skip("release", "the re-test failed");
      steps.step("burn-in").status = "FAILED";
      const which = results
        .filter((r) => failed.some((d) => d.name === r.device))
        .map((r) => `${r.device} (SLURM job ${r.slurmJobId} ${r.state}, exit code ${r.exitCode ?? "unknown"})`);
      throw steps.failure("burn-in", `re-test failed on ${which.join(", ")}; cordoned again`);
    }
  } else {
    let results: DeviceResult[];
    try {
      await steps.run("uncordon", async (tick) => {
        await cordon(devices, false);
        return eachDevice(devices, tick, (d) => waiting.slurmWaitDrain(d, false));
      });
      results = await burnIn(steps, input, devices, true);
    } catch (err) {
      // Lifted, or half lifted, and not re-tested: out of service again before the job ends.
      await CancellationScope.nonCancellable(() => cordon(devices, true, `${reason}: re-test did not complete`));
      throw err;
    }
    const failed = results.filter((r) => r.status === "FAILED");
    if (failed.length) {
      const name = (id: string) => devices.find((d) => d.deviceId === id)!.name;
      await CancellationScope.nonCancellable(() =>
        cordon(
          devices.filter((d) => failed.some((r) => r.deviceId === d.deviceId)),
          true,
          `${reason}: re-test failed`,
        ),
      );
      steps.skip("release", "the re-test failed");
      steps.step("burn-in").status = "FAILED";
      const which = failed.map(
        (r) =>
          `${name(r.deviceId)} (${r.tests
            .filter((t) => !t.passed)
            .map((t) => t.message ?? t.test)
            .join("; ")})`,
      );
      throw steps.failure("burn-in", `re-test failed on ${which.join(", ")}; cordoned again`);
    }
  }
  await steps.run("release", async (tick) => {
    await eachDevice(devices, tick, (d) => quick.ironicEndMaintenance(d, maintenance));
    await quick.recordOnHub(input.jobId, devices);
  });
  return steps.snapshot();
}

/**
 * burn-in: the BURN_IN workflow's SLURM job per device (its activities, under this job's name),
 * waited for; a failure or a cancellation cancels what was submitted. With `withResults`
 * (RETEST_PATCH) each device's results are then collected and reported to the hub, as a burn-in's.
 */
function burnIn(
  steps: Steps,
  input: JobWorkflowInput<"REPAIR">,
  devices: DevicePlan[],
  withResults: true,
): Promise<DeviceResult[]>;
function burnIn(steps: Steps, input: JobWorkflowInput<"REPAIR">, devices: DevicePlan[]): Promise<BurnInResult[]>;
async function burnIn(
  steps: Steps,
  input: JobWorkflowInput<"REPAIR">,
  devices: DevicePlan[],
  withResults = false,
): Promise<BurnInResult[] | DeviceResult[]> {
  const { burnInMinutes, partition } = input.params;
  const submitted: number[] = [];
  // Results folders by device id (burnInDeviceFolder); a repair that started before reads the folder by name.
  const byId = withResults && patched(FOLDER_BY_ID_PATCH);
  const folderOf = (d: DevicePlan) =>
    byId ? burnInDeviceFolder(input.jobName, d.deviceId) : `${input.jobName}/${d.name}`;
  const summary = (rs: (BurnInResult | DeviceResult)[]) =>
    rs
      .map((r) =>
        "slurmJobId" in r
          ? `${r.device}: SLURM job ${r.slurmJobId} ${r.state} exit ${r.exitCode ?? "?"}`
          : `${devices.find((d) => d.deviceId === r.deviceId)!.name}: ${r.status}`,
      )
      .join("; ")
      .slice(0, MESSAGE_MAX);
  try {
    return await steps.run(
      "burn-in",
      async (tick): Promise<BurnInResult[] | DeviceResult[]> => {
        const ids = await CancellationScope.nonCancellable(() =>
          Promise.all(
            devices.map(async (d) => {
              const id = await quick.slurmSubmitBurnIn({
                jobId: input.jobId,
                jobName: input.jobName,
                device: d,
                durationMinutes: burnInMinutes,
                ...(partition ? { partition } : {}),
                ...(withResults ? { tests: [...RETEST_TESTS] } : {}),
                ...(byId ? { folder: folderOf(d) } : {}),
              });
              submitted.push(id);
              return id;
            }),
          ),
        );
        const ends = await eachDevice(devices, tick, (d) =>
          waiting.slurmWait({ slurmJobId: ids[devices.indexOf(d)]!, device: d.name }),
        );
        if (!withResults) return ends;
        // The folder slurmSubmitBurnIn wrote the device's results to.
        const results = await Promise.all(
          devices.map((d, i) =>
            quick.burnInCollect({
              deviceId: d.deviceId,
              folder: folderOf(d),
              tests: [...RETEST_TESTS],
              slurm: ends[i]!,
            }),
          ),
        );
        await quick.burnInReport({ jobId: input.jobId, results });
        return results;
      },
      summary,
    );
  } catch (err) {
    if (submitted.length) await CancellationScope.nonCancellable(() => quick.slurmCancel([...submitted]));
    throw err;
  }
}
