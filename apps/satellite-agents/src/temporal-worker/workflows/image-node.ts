/**
 * IMAGE_NODE: deploys an image onto each available node (Ironic `active`, its user data in a
 * config drive) and waits for `active`. TEARDOWN is its inverse.
 */
import { workflowInfo } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick, waiting } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function imageNodeWorkflow(input: JobWorkflowInput<"IMAGE_NODE">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.IMAGE_NODE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const { image, osHash, userData } = input.params;
  const { workflowId } = workflowInfo();
  await steps.run("ironic-deploy", (tick) =>
    eachDevice(plan.devices, tick, (d) => waiting.ironicDeploy(d, { image, osHash, userData, marker: workflowId })),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
