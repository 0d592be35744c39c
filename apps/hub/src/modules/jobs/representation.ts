import { LogsUrlSchema, type BurnInDeviceResult, type Job, type JobParams } from "@fm/domain";
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
    // A link stored before reports were held to http(s) is not passed on to anyone.
    logsUrl: r.logsUrl !== null && LogsUrlSchema.safeParse(r.logsUrl).success ? r.logsUrl : null,
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
