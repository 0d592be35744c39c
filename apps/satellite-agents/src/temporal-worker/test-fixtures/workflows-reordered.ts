/**
 * A deliberately incompatible edit of enrolWorkflow (provide before inspect), for the replay
 * test to prove that it catches non-determinism. Not used by the worker.
 */
import { proxyActivities } from "@temporalio/workflow";
import type { JobWorkflowInput } from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";

const a = proxyActivities<Activities>({ startToCloseTimeout: "30s" });

export async function enrolWorkflow(input: JobWorkflowInput): Promise<void> {
  const plan = await a.preflight({ jobId: input.jobId, kind: input.kind });
  if (!plan) return;
  await Promise.all(plan.devices.map((d) => a.netboxCheckStaged(d)));
  await Promise.all(plan.devices.map((d) => a.ironicEnroll(d)));
  await Promise.all(plan.devices.map((d) => a.ironicProvide(d)));
  await Promise.all(plan.devices.map((d) => a.ironicInspect(d)));
}
