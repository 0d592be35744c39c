/**
 * SLURM_ADOPT: makes each device a SLURM compute node through OpenStack, as the rollout guide's
 * slurm-adopt workflow does: a Nova server on its Ironic node from the site's bootstrap config
 * (waited for until ACTIVE), then its SLURM node, which the server's slurmd registers, resumed.
 * Only where SLURM is reached through OpenStack (the hub refuses the job elsewhere; a site
 * changed since is caught here too).
 */
import { ApplicationFailure } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick, waiting } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function slurmAdoptWorkflow(input: JobWorkflowInput<"SLURM_ADOPT">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.SLURM_ADOPT);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run(
    "nova-boot",
    async (tick) => {
      if (!plan.site.openstackSlurmEnabled)
        throw ApplicationFailure.nonRetryable(
          `SLURM is not reached through OpenStack at ${plan.site.slug} (openstackSlurmEnabled is off)`,
          "BadInput",
        );
      return eachDevice(plan.devices, tick, (d) => waiting.novaBootSlurmNode(d, { jobId: input.jobId }));
    },
    (servers) => servers.map((s) => `${s.server} ACTIVE on node ${s.nodeUuid}`).join("; "),
  );
  await steps.run(
    "slurm-register",
    (tick) => eachDevice(plan.devices, tick, (d) => waiting.slurmAwaitNode(d)),
    (states) => `registered (${states.join(", ").toLowerCase()})`,
  );
  await steps.run(
    "slurm-resume",
    (tick) => eachDevice(plan.devices, tick, (d) => quick.slurmResumeNode(d)),
    (done) => done.join("; "),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
