/**
 * UNENROL: the device back to `staged` in NetBox, the tray's removal declared to the topology
 * service (a topology-sync request, as the rollout guide has an unenrolment of an active tray
 * do, at sites with a topology region), and that recorded on the hub.
 */
import { patched } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick } from "./proxies.ts";
import { Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function unenrolWorkflow(input: JobWorkflowInput<"UNENROL">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.UNENROL);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run("netbox-stage", (tick) => eachDevice(plan.devices, tick, (d) => quick.netboxStage(d)));
  // Unenrolments started before this step existed replay without it.
  if (!patched("unenrol-topology-sync")) steps.skip("topology-sync", "not part of this workflow's version");
  else if (!plan.site.topologyRegion)
    steps.skip("topology-sync", `${plan.site.slug} is no topology target (no region)`);
  else {
    const names = plan.devices.map((d) => d.name).join(", ");
    const reason = `unenrolment of ${names} (job ${input.jobName})${input.params.reason ? `: ${input.params.reason}` : ""}`;
    await steps.run(
      "topology-sync",
      () => quick.hubTopologySync(input.jobId, reason.slice(0, 1000)),
      () => `requested for region ${plan.site.topologyRegion}`,
    );
  }
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
