import type { Job } from "@fm/domain";
import type { JobRow } from "./repo.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toJob(r: JobRow): Job {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    status: r.status,
    siteId: r.siteId,
    deviceIds: r.devices.map((d) => d.deviceId),
    params: r.params as Record<string, unknown>,
    steps: r.steps as Job["steps"],
    progress: r.progress,
    error: (r.error as Job["error"]) ?? null,
    workflowId: r.workflowId,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    cancelRequestedAt: iso(r.cancelRequestedAt),
    finishedAt: iso(r.finishedAt),
    version: r.version,
  };
}
