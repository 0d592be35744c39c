/**
 * Jobs: created by operators and automation, picked up by the site's workflow agent. Creation
 * checks every device against the kind (domain `jobRefusal`), requires one site, and claims the
 * devices in job_devices, whose partial unique index guarantees one active job per device even
 * under concurrent requests. Every change is audited and goes to the feed.
 */
import {
  Conflict,
  Forbidden,
  NotFound,
  Unprocessable,
  agentServesSite,
  canTransition,
  decodeCursor,
  jobRefusal,
  ACTIVE_JOB_STATUSES,
  TERMINAL_JOB_STATUSES,
} from "@fm/domain";
import type { Job, JobCreate, JobDeviceObservation, JobListQuery, JobReport, JobStatus } from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetPage } from "../../lib/paging.ts";
import { deviceRepo, type DeviceRow } from "../devices/repo.ts";
import { differs, type DeviceService } from "../devices/service.ts";
import { resolveSiteId } from "../sites/repo.ts";
import { jobName } from "./names.ts";

const INCLUDE = {
  devices: { select: { deviceId: true }, orderBy: { deviceId: "asc" } },
} as const satisfies Prisma.JobInclude;
type Row = Prisma.JobGetPayload<{ include: typeof INCLUDE }>;
const canonical = (v: unknown) => JSON.stringify(v ?? null);
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentJob(r: Row): Job {
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

const notFound = (id: string) => new NotFound("job_not_found", `No job with id ${id}`);

export function createJobService({ prisma, devices }: { prisma: PrismaClient; devices: DeviceService }) {
  async function lock(tx: Db, id: string): Promise<Row> {
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM jobs WHERE id = ${id}::uuid FOR UPDATE`;
    if (!rows.length) throw notFound(id);
    return (await tx.job.findUnique({ where: { id }, include: INCLUDE }))!;
  }

  /** Moves a job to `to` (checked against the state machine), releasing its devices when terminal. */
  async function transition(
    tx: Db,
    ctx: RequestContext,
    current: Row,
    to: JobStatus,
    extra: Prisma.JobUncheckedUpdateInput = {},
  ): Promise<Row> {
    if (!canTransition(current.status, to))
      throw new Conflict("job_transition_invalid", `A ${current.status} job cannot become ${to}`);
    const terminal = TERMINAL_JOB_STATUSES.includes(to);
    const row = await tx.job.update({
      where: { id: current.id },
      data: {
        ...extra,
        status: to,
        version: { increment: 1 },
        updatedAt: new Date(),
        ...(terminal ? { finishedAt: new Date() } : {}),
      },
      include: INCLUDE,
    });
    if (terminal) await tx.jobDevice.updateMany({ where: { jobId: current.id }, data: { active: false } });
    await recordChange(tx, ctx, {
      resourceType: "job",
      resourceId: row.id,
      siteId: row.siteId,
      verb: "updated",
      before: presentJob(current),
      after: presentJob(row),
    });
    return row;
  }

  /** Records what a workflow observed of its devices; a repeated observation changes nothing. */
  async function observe(
    tx: Db,
    ctx: RequestContext,
    job: Row,
    observations: JobDeviceObservation[],
    source: string,
  ): Promise<number> {
    const own = new Set(job.devices.map((d) => d.deviceId));
    const foreign = observations.filter((o) => !own.has(o.deviceId));
    if (foreign.length) {
      throw new Unprocessable(
        "device_not_in_job",
        `Device(s) ${foreign.map((o) => o.deviceId).join(", ")} are not part of job ${job.name}`,
        {
          errors: foreign.map((o) => ({
            path: `body.devices.${observations.indexOf(o)}.deviceId`,
            message: "not a device of this job",
          })),
        },
      );
    }
    const rows = await deviceRepo.findByIds(
      tx,
      observations.map((o) => o.deviceId),
    );
    const byId = new Map(rows.map((r: DeviceRow) => [r.id, r]));
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
      try {
        if (await devices.apply(tx, ctx, current, stamped, source)) changed++;
      } catch (err) {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
          throw new Conflict(
            "ironic_node_taken",
            `Ironic node ${o.ironic?.nodeUuid} is already recorded on another device`,
          );
        }
        throw err;
      }
    }
    return changed;
  }

  return {
    async create(ctx: RequestContext, input: JobCreate): Promise<Job> {
      const ids = [...new Set(input.deviceIds)];
      const row = await prisma.$transaction(async (tx) => {
        const found = await deviceRepo.findByIds(tx, ids);
        const missing = ids.filter((id) => !found.some((d) => d.id === id));
        if (missing.length)
          throw new Unprocessable("unknown_device", `No device with id ${missing.join(", ")}`, {
            errors: missing.map((id) => ({
              path: `body.deviceIds.${input.deviceIds.indexOf(id)}`,
              message: "unknown device",
            })),
          });
        const sites = new Set(found.map((d) => d.siteId));
        if (sites.size > 1)
          throw new Unprocessable(
            "devices_span_sites",
            "A job's devices must all be at one site: its workflow runs on that site's satellite",
          );
        const refusals = found
          .map((d) => jobRefusal(input.kind, devices.present(d)))
          .filter((r): r is string => r !== null);
        if (refusals.length)
          throw new Conflict("device_state_conflict", refusals.join("; "), {
            errors: refusals.map((message) => ({ path: "body.deviceIds", message })),
          });
        const busy = await tx.jobDevice.findMany({
          where: { deviceId: { in: ids }, active: true },
          include: { job: { select: { name: true } } },
        });
        if (busy.length) {
          const names = busy.map((b) => `${found.find((d) => d.id === b.deviceId)!.name} (${b.job.name})`);
          throw new Conflict(
            "device_has_active_job",
            `Device(s) already have an active job: ${names.join(", ")}; cancel it or wait for it to end`,
          );
        }
        for (let attempt = 0; ; attempt++) {
          // A savepoint, so that a name collision (unique index) can be retried with another
          // name without aborting the whole transaction.
          await tx.$executeRawUnsafe("SAVEPOINT job_create");
          try {
            return await createRow(tx, ctx, input, found[0]!.siteId, ids);
          } catch (err) {
            const collision =
              err instanceof Prisma.PrismaClientKnownRequestError &&
              err.code === "P2002" &&
              String(err.meta?.target ?? err.message).includes("name");
            if (!collision || attempt >= 3) throw err;
            await tx.$executeRawUnsafe("ROLLBACK TO SAVEPOINT job_create");
          }
        }
      });
      return presentJob(row);
    },

    async list(q: JobListQuery) {
      const siteId = q.site ? await resolveSiteId(prisma, q.site, "site") : undefined;
      const where: Prisma.JobWhereInput = {
        ...(q.status ? { status: q.status } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(siteId ? { siteId } : {}),
        ...(q.device ? { devices: { some: { deviceId: q.device } } } : {}),
      };
      if (q.active !== undefined) {
        // ?active= narrows ?status= (both given and disjoint: nothing matches)
        const statuses = (q.active ? ACTIVE_JOB_STATUSES : TERMINAL_JOB_STATUSES).filter(
          (s) => !q.status || s === q.status,
        );
        where.status = { in: [...statuses] };
      }
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.job.findMany({
          where: afterId ? { AND: [where, { id: { gt: afterId } }] } : where,
          orderBy: { id: "asc" },
          take: q.limit + 1,
          include: INCLUDE,
        }),
        prisma.job.count({ where }),
      ]);
      return keysetPage(rows, count, q.limit, presentJob);
    },

    async get(id: string): Promise<Job> {
      const row = await prisma.job.findUnique({ where: { id }, include: INCLUDE });
      if (!row) throw notFound(id);
      return presentJob(row);
    },

    /**
     * A report from the site's workflow agent or Temporal worker: status (checked against the
     * state machine), workflow id, steps, progress, error, and device observations. Only an
     * agent of a satellite serving the job's site may report. Idempotent: a report that
     * changes nothing writes nothing (no version bump, no feed event).
     */
    async report(ctx: RequestContext, id: string, report: JobReport): Promise<Job> {
      const agent = ctx.principal.agent;
      if (!agent || !REPORTERS.has(agent.kind))
        throw new Forbidden(
          "agent_not_allowed",
          "Only a satellite's workflow agent or Temporal worker reports on jobs",
        );
      const row = await prisma.$transaction(async (tx) => {
        let job = await lock(tx, id);
        if (!agentServesSite(agent, job.siteId))
          throw new Forbidden(
            "site_not_served",
            `Satellite ${agent.satellite} does not serve the site of job ${job.name}`,
          );
        if (report.workflowId && job.workflowId && report.workflowId !== job.workflowId) {
          throw new Conflict(
            "job_workflow_mismatch",
            `Job ${job.name} runs as workflow ${job.workflowId}, not ${report.workflowId}`,
          );
        }
        const terminal = TERMINAL_JOB_STATUSES.includes(job.status);
        // An ended job's devices may already belong to another job: what its workflow still
        // observes is not recorded.
        if (report.devices && !terminal) await observe(tx, ctx, job, report.devices, `job:${job.name}`);
        if (report.status && report.status !== job.status && !canTransition(job.status, report.status)) {
          throw new Conflict(
            "job_transition_invalid",
            `Job ${job.name} is ${job.status}; it cannot become ${report.status}`,
          );
        }
        if (terminal) return job; // late progress for an ended job changes nothing
        const data: Prisma.JobUncheckedUpdateInput = {};
        if (report.workflowId && !job.workflowId) data.workflowId = report.workflowId;
        if (report.steps && canonical(report.steps) !== canonical(job.steps))
          data.steps = report.steps as Prisma.InputJsonValue;
        const progress = report.status === "SUCCEEDED" ? 1 : report.progress;
        if (progress !== undefined && progress !== job.progress) data.progress = progress;
        if (report.error && canonical(report.error) !== canonical(job.error))
          data.error = report.error as Prisma.InputJsonValue;
        if (report.status && report.status !== job.status) {
          job = await transition(tx, ctx, job, report.status, data);
        } else if (Object.keys(data).length) {
          const updated = await tx.job.update({
            where: { id: job.id },
            data: { ...data, version: { increment: 1 }, updatedAt: new Date() },
            include: INCLUDE,
          });
          await recordChange(tx, ctx, {
            resourceType: "job",
            resourceId: job.id,
            siteId: job.siteId,
            verb: "updated",
            before: presentJob(job),
            after: presentJob(updated),
          });
          job = updated;
        }
        return job;
      });
      return presentJob(row);
    },

    /**
     * A PENDING job nothing has picked up is cancelled at once; a submitted or running one
     * becomes CANCELLING until its workflow confirms. Repeating a cancel changes nothing.
     */
    async cancel(ctx: RequestContext, id: string): Promise<Job> {
      const row = await prisma.$transaction(async (tx) => {
        const job = await lock(tx, id);
        if (job.status === "CANCELLING" || job.status === "CANCELLED") return job;
        if (!ACTIVE_JOB_STATUSES.includes(job.status))
          throw new Conflict("job_finished", `The job already ended (${job.status})`);
        return transition(tx, ctx, job, job.status === "PENDING" ? "CANCELLED" : "CANCELLING", {
          cancelRequestedAt: new Date(),
        });
      });
      return presentJob(row);
    },
  };
}

async function createRow(
  tx: Db,
  ctx: RequestContext,
  input: JobCreate,
  siteId: string,
  deviceIds: string[],
): Promise<Row> {
  const job = await tx.job.create({
    data: {
      name: jobName(input.kind),
      kind: input.kind,
      siteId,
      params: input.params as Prisma.InputJsonValue,
      createdBy: ctx.principal.id,
    },
  });
  try {
    await tx.jobDevice.createMany({ data: deviceIds.map((deviceId) => ({ jobId: job.id, deviceId })) });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      throw new Conflict(
        "device_has_active_job",
        "A device of this job already has an active job; cancel it or wait for it to end",
      );
    }
    throw err;
  }
  const row = (await tx.job.findUnique({ where: { id: job.id }, include: INCLUDE }))!;
  await recordChange(tx, ctx, {
    resourceType: "job",
    resourceId: row.id,
    siteId,
    verb: "created",
    before: null,
    after: presentJob(row),
  });
  return row;
}
/** The agents that report on jobs: the site's workflow agent and its Temporal worker. */
const REPORTERS = new Set(["workflow", "temporal-worker"]);

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

export type JobService = ReturnType<typeof createJobService>;
