/**
 * Jobs: created by operators and automation, picked up by the site's workflow agent. Creation
 * checks every device against the kind (domain `jobRefusal`), requires one site, and claims the
 * devices in job_devices, whose partial unique index guarantees one active job per device even
 * under concurrent requests. Every change is audited and goes to the feed.
 */
import { Conflict, NotFound, Unprocessable, canTransition, decodeCursor, jobRefusal, ACTIVE_JOB_STATUSES, TERMINAL_JOB_STATUSES } from "@fm/domain";
import type { Job, JobCreate, JobListQuery, JobStatus } from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetPage } from "../../lib/paging.ts";
import { deviceRepo } from "../devices/repo.ts";
import type { DeviceService } from "../devices/service.ts";
import { resolveSiteId } from "../sites/repo.ts";
import { jobName } from "./names.ts";

const INCLUDE = { devices: { select: { deviceId: true }, orderBy: { deviceId: "asc" } } } as const satisfies Prisma.JobInclude;
type Row = Prisma.JobGetPayload<{ include: typeof INCLUDE }>;
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
  async function transition(tx: Db, ctx: RequestContext, current: Row, to: JobStatus, extra: Prisma.JobUncheckedUpdateInput = {}): Promise<Row> {
    if (!canTransition(current.status, to)) throw new Conflict("job_transition_invalid", `A ${current.status} job cannot become ${to}`);
    const terminal = TERMINAL_JOB_STATUSES.includes(to);
    const row = await tx.job.update({
      where: { id: current.id },
      data: { ...extra, status: to, version: { increment: 1 }, updatedAt: new Date(), ...(terminal ? { finishedAt: new Date() } : {}) },
      include: INCLUDE,
    });
    if (terminal) await tx.jobDevice.updateMany({ where: { jobId: current.id }, data: { active: false } });
    await recordChange(tx, ctx, { resourceType: "job", resourceId: row.id, siteId: row.siteId, verb: "updated", before: presentJob(current), after: presentJob(row) });
    return row;
  }

  return {
    async create(ctx: RequestContext, input: JobCreate): Promise<Job> {
      const ids = [...new Set(input.deviceIds)];
      const row = await prisma.$transaction(async (tx) => {
        const found = await deviceRepo.findByIds(tx, ids);
        const missing = ids.filter((id) => !found.some((d) => d.id === id));
        if (missing.length) throw new Unprocessable("unknown_device", `No device with id ${missing.join(", ")}`, { errors: missing.map((id) => ({ path: `body.deviceIds.${input.deviceIds.indexOf(id)}`, message: "unknown device" })) });
        const sites = new Set(found.map((d) => d.siteId));
        if (sites.size > 1) throw new Unprocessable("devices_span_sites", "A job's devices must all be at one site: its workflow runs on that site's satellite");
        const refusals = found.map((d) => jobRefusal(input.kind, devices.present(d))).filter((r): r is string => r !== null);
        if (refusals.length) throw new Conflict("device_state_conflict", refusals.join("; "), { errors: refusals.map((message) => ({ path: "body.deviceIds", message })) });
        const busy = await tx.jobDevice.findMany({ where: { deviceId: { in: ids }, active: true }, include: { job: { select: { name: true } } } });
        if (busy.length) {
          const names = busy.map((b) => `${found.find((d) => d.id === b.deviceId)!.name} (${b.job.name})`);
          throw new Conflict("device_has_active_job", `Device(s) already have an active job: ${names.join(", ")}; cancel it or wait for it to end`);
        }
        for (let attempt = 0; ; attempt++) {
          // A savepoint, so that a name collision (unique index) can be retried with another
          // name without aborting the whole transaction.
          await tx.$executeRawUnsafe("SAVEPOINT job_create");
          try {
            return await createRow(tx, ctx, input, found[0]!.siteId, ids);
          } catch (err) {
            const collision = err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002" && String(err.meta?.target ?? err.message).includes("name");
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
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.job.findMany({ where: afterId ? { AND: [where, { id: { gt: afterId } }] } : where, orderBy: { id: "asc" }, take: q.limit + 1, include: INCLUDE }),
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
     * A PENDING job nothing has picked up is cancelled at once; a submitted or running one
     * becomes CANCELLING until its workflow confirms. Repeating a cancel changes nothing.
     */
    async cancel(ctx: RequestContext, id: string): Promise<Job> {
      const row = await prisma.$transaction(async (tx) => {
        const job = await lock(tx, id);
        if (job.status === "CANCELLING" || job.status === "CANCELLED") return job;
        if (!ACTIVE_JOB_STATUSES.includes(job.status)) throw new Conflict("job_finished", `The job already ended (${job.status})`);
        return transition(tx, ctx, job, job.status === "PENDING" ? "CANCELLED" : "CANCELLING", { cancelRequestedAt: new Date() });
      });
      return presentJob(row);
    },
  };
}

async function createRow(tx: Db, ctx: RequestContext, input: JobCreate, siteId: string, deviceIds: string[]): Promise<Row> {
  const job = await tx.job.create({ data: { name: jobName(input.kind), kind: input.kind, siteId, params: input.params as Prisma.InputJsonValue, createdBy: ctx.principal.id } });
  try {
    await tx.jobDevice.createMany({ data: deviceIds.map((deviceId) => ({ jobId: job.id, deviceId })) });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      throw new Conflict("device_has_active_job", "A device of this job already has an active job; cancel it or wait for it to end");
    }
    throw err;
  }
  const row = (await tx.job.findUnique({ where: { id: job.id }, include: INCLUDE }))!;
  await recordChange(tx, ctx, { resourceType: "job", resourceId: row.id, siteId, verb: "created", before: null, after: presentJob(row) });
  return row;
}
export type JobService = ReturnType<typeof createJobService>;
