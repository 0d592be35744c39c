import type { BurnInDeviceResult, Job, JobParams } from "@fm/domain";
import type { JobRow } from "./repo.ts";
import { isoOrNull } from "../../lib/timestamps.ts";

/** The job as the API shows it; its params were validated against its kind's schema when it was created. */
export function toJob(r: JobRow): Job {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    status: r.status,
    siteId: r.siteId,
    deviceIds: r.devices.map((d) => d.deviceId),
    params: r.params as JobParams,
    steps: r.steps as Job["steps"],
    progress: r.progress,
    error: (r.error as Job["error"]) ?? null,
    burnIn: r.devices.filter((d) => d.burnIn !== null).map((d) => d.burnIn as BurnInDeviceResult),
    logsUrl: r.logsUrl,
    workflowId: r.workflowId,
    signal: (r.signal as Job["signal"]) ?? null,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    cancelRequestedAt: isoOrNull(r.cancelRequestedAt),
    finishedAt: isoOrNull(r.finishedAt),
    version: r.version,
  } as Job;
}
