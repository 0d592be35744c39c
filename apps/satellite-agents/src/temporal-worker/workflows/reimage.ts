/** REIMAGE: rebuilds each node's instance with the given image (Ironic `rebuild`) and waits for `active`. */
import { workflowInfo } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick, waiting } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function reimageWorkflow(input: JobWorkflowInput<"REIMAGE">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.REIMAGE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const { image } = input.params;
  const { workflowId } = workflowInfo();
  await steps.run("ironic-rebuild", (tick) =>
    eachDevice(plan.devices, tick, (d) => waiting.ironicRebuild(d, { image, marker: workflowId })),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
