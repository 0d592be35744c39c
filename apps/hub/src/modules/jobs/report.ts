/**
 * A report from the site's workflow agent or Temporal worker on a job it runs: status (checked
 * against the state machine), workflow id, steps, progress, error, and what it observed of the
 * job's devices. Idempotent: a report that changes nothing writes nothing (no version bump, no
 * feed event).
 */
import { Conflict, TERMINAL_JOB_STATUSES, Unprocessable, canTransition } from "@fm/domain";
import type { BurnInDeviceResult, JobCordon, JobDeviceObservation, JobReport } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { deviceRows } from "../devices/public.ts";
import { differs, type DeviceService } from "../devices/public.ts";
import { fileSiteTopologySync } from "../topology/public.ts";
import { transition, updateJob } from "./lifecycle.ts";
import { jobRepo, type JobRow, type JobUpdate } from "./repo.ts";

/** The agents that report on jobs: the site's workflow agent and its Temporal worker. */
export const REPORTERS = new Set(["workflow", "temporal-worker"]);

const canonical = (v: unknown) => JSON.stringify(v ?? null);
/** JSON with object keys sorted: jsonb gives back its own key order. */
const sortedJson = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

/** Applies a report to a locked job inside the caller's transaction; returns the job as it then is. */
export async function applyReport(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  job: JobRow,
  report: JobReport,
): Promise<JobRow> {
  if (report.workflowId && job.workflowId && report.workflowId !== job.workflowId) {
    throw new Conflict(
      "job_workflow_mismatch",
      `Job ${job.name} runs as workflow ${job.workflowId}, not ${report.workflowId}`,
    );
  }
  requireKind(job, report);
  const terminal = TERMINAL_JOB_STATUSES.includes(job.status);
  // An ended job's devices may already belong to another job: what its workflow still
  // observes is not recorded.
  if (report.devices && !terminal) await observe(tx, ctx, devices, job, report.devices, `job:${job.name}`);
  if (report.cordons && !terminal) await cordon(tx, ctx, devices, job, report.cordons);
  if (report.topologySync && !terminal)
    await fileSiteTopologySync(tx, ctx, job.siteId, report.topologySync.reason, `job:${job.id}`);
  const resultsChanged = report.burnIn && !terminal ? await recordBurnIn(tx, ctx, devices, job, report.burnIn) : false;
  if (report.status && report.status !== job.status && !canTransition(job.status, report.status)) {
    throw new Conflict("job_transition_invalid", `Job ${job.name} is ${job.status}; it cannot become ${report.status}`);
  }
  if (terminal) return job; // late progress for an ended job changes nothing
  const data: JobUpdate = {};
  if (report.workflowId && !job.workflowId) data.workflowId = report.workflowId;
  if (report.steps && canonical(report.steps) !== canonical(job.steps)) data.steps = report.steps;
  const progress = report.status === "SUCCEEDED" ? 1 : report.progress;
  if (progress !== undefined && progress !== job.progress) data.progress = progress;
  if (report.error && canonical(report.error) !== canonical(job.error)) data.error = report.error;
  if (report.logsUrl && report.logsUrl !== job.logsUrl) data.logsUrl = report.logsUrl;
  if (report.status && report.status !== job.status) return transition(tx, ctx, job, report.status, data);
  // New results change the job's representation: a new version and a feed event, like any change.
  if (Object.keys(data).length || resultsChanged) return updateJob(tx, ctx, job, data);
  return job;
}

/**
 * Refuses (422) what only some kinds' workflows report: cordons (a REPAIR's, a NODE_SWAP's failed
 * tray), a topology-sync
 * request (a tray's removal: UNENROL, NODE_SWAP) and burn-in results (a BURN_IN's, or a REPAIR's
 * re-test). Any other job reporting them is a confused or misused agent, ended job or not.
 */
function requireKind(job: JobRow, report: JobReport): void {
  if (report.cordons && job.kind !== "REPAIR" && job.kind !== "NODE_SWAP")
    throw new Unprocessable(
      "not_a_repair",
      `Job ${job.name} is a ${job.kind}: only a repair or a node swap reports cordons`,
    );
  if (report.topologySync && job.kind !== "UNENROL" && job.kind !== "NODE_SWAP")
    throw new Unprocessable(
      "not_a_tray_removal",
      `Job ${job.name} is a ${job.kind}: only an unenrolment or a node swap files a topology-sync request`,
    );
  // A repair's re-test is a burn-in too: its result is the device's last burn-in.
  if (report.burnIn && job.kind !== "BURN_IN" && job.kind !== "REPAIR")
    throw new Unprocessable(
      "not_a_burn_in",
      `Job ${job.name} is a ${job.kind}: only a burn-in or a repair's re-test reports results`,
    );
}

/** Refuses observations or results about devices that are not the job's (422). */
function requireOwn(job: JobRow, ids: string[], field: string): void {
  const own = new Set(job.devices.map((d) => d.deviceId));
  const foreign = ids.map((id, i) => ({ id, i })).filter((x) => !own.has(x.id));
  if (foreign.length)
    throw new Unprocessable(
      "device_not_in_job",
      `Device(s) ${foreign.map((f) => f.id).join(", ")} are not part of job ${job.name}`,
      { errors: foreign.map((f) => ({ path: `body.${field}.${f.i}.deviceId`, message: "not a device of this job" })) },
    );
}

/** Cordons or uncordons the job's devices as its workflow asks; a repeated cordon changes nothing. */
async function cordon(tx: Db, ctx: RequestContext, devices: DeviceService, job: JobRow, cordons: JobCordon[]) {
  requireOwn(
    job,
    cordons.map((c) => c.deviceId),
    "cordons",
  );
  const rows = await deviceRows.lockByIds(
    tx,
    cordons.map((c) => c.deviceId),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const c of cordons) await devices.cordonByJob(tx, ctx, byId.get(c.deviceId)!, c, `job:${job.name}`);
}

/**
 * Records a burn-in's results: each device's result on the job, and on the device its last
 * burn-in (history, audit and feed, as any change of the device). A result already recorded
 * changes nothing. Returns whether anything was recorded.
 */
async function recordBurnIn(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  job: JobRow,
  results: BurnInDeviceResult[],
): Promise<boolean> {
  requireOwn(
    job,
    results.map((r) => r.deviceId),
    "burnIn",
  );
  const stored = new Map(job.devices.map((d) => [d.deviceId, sortedJson(d.burnIn)]));
  const fresh = results.filter((r) => stored.get(r.deviceId) !== sortedJson(r));
  if (!fresh.length) return false;
  const rows = await deviceRows.lockByIds(
    tx,
    fresh.map((r) => r.deviceId),
  );
  const at = new Date();
  for (const r of fresh) {
    await jobRepo.setBurnIn(tx, job.id, r.deviceId, r);
    const current = rows.find((d) => d.id === r.deviceId)!;
    await devices.apply(
      tx,
      ctx,
      current,
      { burnInStatus: r.status, burnInJobId: job.id, burnInAt: at },
      `job:${job.name}`,
    );
  }
  return true;
}

/** Records what a workflow observed of its devices; a repeated observation changes nothing. */
async function observe(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  job: JobRow,
  observations: JobDeviceObservation[],
  source: string,
): Promise<number> {
  requireOwn(
    job,
    observations.map((o) => o.deviceId),
    "devices",
  );
  // Locked: a NetBox or Ironic push changing the same devices at the same moment waits, and this
  // report compares against what it committed (else both record the one change in the history).
  const rows = await deviceRows.lockByIds(
    tx,
    observations.map((o) => o.deviceId),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const at = new Date();
  let changed = 0;
  for (const o of observations) {
    const current = byId.get(o.deviceId)!;
    const changes = observedChanges(o);
    if (!differs(current, changes)) continue;
    const stamped = {
      ...changes,
      ...(o.netbox ? { netboxObservedAt: at } : {}),
      ...(o.ironic ? { ironicObservedAt: at } : {}),
    };
    // An Ironic node another device already holds is a 409 (ironic_node_taken) from the repo.
    if (await devices.apply(tx, ctx, current, stamped, source)) changed++;
  }
  return changed;
}

/** Device columns a workflow's observation sets, without the observed-at stamps. */
function observedChanges(o: JobDeviceObservation) {
  return {
    ...(o.netbox
      ? {
          netboxStatus: o.netbox.status,
          ...(o.netbox.platformClass !== undefined ? { platformClass: o.netbox.platformClass } : {}),
          ...(o.netbox.tags ? { tags: [...o.netbox.tags].sort() } : {}),
        }
      : {}),
    ...(o.ironic
      ? {
          ironicInstance: o.ironic.instance,
          ironicNodeUuid: o.ironic.nodeUuid,
          ironicProvisionState: o.ironic.provisionState,
          ironicTargetProvisionState: o.ironic.targetProvisionState,
          ironicPowerState: o.ironic.powerState,
          ironicMaintenance: o.ironic.maintenance,
          ironicLastError: o.ironic.lastError,
        }
      : {}),
  };
}
