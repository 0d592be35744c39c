/**
 * RELEASE: hands nodes back. The SLURM step runs only where the site's SLURM integration is on;
 * otherwise the workflow only checks that each Ironic node exists, then continues.
 */
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function releaseWorkflow(input: JobWorkflowInput<"RELEASE">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.RELEASE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  if (plan.site.slurmEnabled)
    await steps.run("slurm-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.slurmCheckNode(d)));
  else steps.skip("slurm-check", `the SLURM integration is off at ${plan.site.slug}`);
  await steps.run("ironic-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.ironicCheck(d)));
  await steps.run("hand-back", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
