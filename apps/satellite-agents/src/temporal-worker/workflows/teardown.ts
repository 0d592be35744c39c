/** TEARDOWN: drives each node through Ironic `deleted` (cleaning wipes it) and waits for `available`. */
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick, waiting } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function teardownWorkflow(input: JobWorkflowInput<"TEARDOWN">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.TEARDOWN);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run("ironic-teardown", (tick) => eachDevice(plan.devices, tick, (d) => waiting.ironicTeardown(d)));
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
