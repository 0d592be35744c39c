/** Changes to an existing job, each written with its audit record and feed event. */
import { Conflict, TERMINAL_JOB_STATUSES, canTransition, type JobStatus } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { recordChange } from "../../changes/recorder.ts";
import { jobRepo, type JobRow, type JobUpdate } from "./repo.ts";
import { toJob } from "./representation.ts";

/** Writes `data` to the job (version + 1) and records the change. */
export async function updateJob(tx: Db, ctx: RequestContext, current: JobRow, data: JobUpdate): Promise<JobRow> {
  const row = await jobRepo.update(tx, current.id, data);
  await recordChange(tx, ctx, {
    resourceType: "job",
    resourceId: row.id,
    siteId: row.siteId,
    verb: "updated",
    before: toJob(current),
    after: toJob(row),
  });
  return row;
}

/** Moves a job to `to` (checked against the state machine), releasing its devices when terminal. */
export async function transition(
  tx: Db,
  ctx: RequestContext,
  current: JobRow,
  to: JobStatus,
  extra: JobUpdate = {},
): Promise<JobRow> {
  if (!canTransition(current.status, to))
    throw new Conflict("job_transition_invalid", `A ${current.status} job cannot become ${to}`);
  const terminal = TERMINAL_JOB_STATUSES.includes(to);
  if (terminal) await jobRepo.releaseDevices(tx, current.id);
  return updateJob(tx, ctx, current, { ...extra, status: to, ...(terminal ? { finishedAt: new Date() } : {}) });
}
