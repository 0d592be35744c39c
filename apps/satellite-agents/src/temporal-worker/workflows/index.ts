/**
 * The job workflows (Temporal TypeScript SDK), one module per kind; this is the module the worker
 * bundles (`workflowsPath`). Workflow code runs in Temporal's deterministic sandbox and is
 * replayed from history after a worker restart: it only sequences activities, keeps the steps
 * (./steps.ts), and answers the progress query. Every effect on the world (Ironic, NetBox,
 * SLURM, the hub, files) is an activity (../activities/), idempotent, so that a retry after a
 * worker died mid-activity never applies an effect twice.
 *
 * Changing the order or the activities of a released workflow breaks the replay of running
 * workflows: add a `patched()` branch instead, and keep the committed histories in
 * ../histories replaying (./replay.test.ts). Workflow type names are the exported function
 * names (JOB_WORKFLOWS in @fm/domain/workflows).
 */
export { burnInWorkflow } from "./burn-in.ts";
export { enrolWorkflow } from "./enrol.ts";
export { imageNodeWorkflow } from "./image-node.ts";
export { nodeSwapWorkflow } from "./node-swap.ts";
export { reimageWorkflow } from "./reimage.ts";
export { slurmAdoptWorkflow } from "./slurm-adopt.ts";
export { releaseWorkflow } from "./release.ts";
export { repairWorkflow } from "./repair.ts";
export { teardownWorkflow } from "./teardown.ts";
export { unenrolWorkflow } from "./unenrol.ts";
export { progressQuery } from "./steps.ts";
