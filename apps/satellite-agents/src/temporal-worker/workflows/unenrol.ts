/** UNENROL: the device back to `staged` in NetBox, and that recorded on the hub. */
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function unenrolWorkflow(input: JobWorkflowInput<"UNENROL">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.UNENROL);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run("netbox-stage", (tick) => eachDevice(plan.devices, tick, (d) => quick.netboxStage(d)));
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
