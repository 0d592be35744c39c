/**
 * RELEASE: hands nodes back. As the rollout guide has it, the SLURM step runs only where SLURM is
 * reached through OpenStack (the site's `openstackSlurmEnabled`); otherwise it builds no SLURM
 * client and the workflow only checks that each Ironic node exists, then continues.
 */
import { patched } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

/**
 * Releases started before the site's two SLURM flags were split decided on `slurmEnabled`, and
 * replay them so; from this patch on the decision is `openstackSlurmEnabled`.
 */
export const RELEASE_OPENSTACK_SLURM_PATCH = "release-slurm-step-on-openstack-slurm";

export async function releaseWorkflow(input: JobWorkflowInput<"RELEASE">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.RELEASE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const slurmStep = patched(RELEASE_OPENSTACK_SLURM_PATCH)
    ? plan.site.openstackSlurmEnabled === true
    : plan.site.slurmEnabled;
  if (slurmStep)
    await steps.run("slurm-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.slurmCheckNode(d)));
  else steps.skip("slurm-check", `SLURM is not reached through OpenStack at ${plan.site.slug}`);
  await steps.run("ironic-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.ironicCheck(d)));
  await steps.run("hand-back", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
