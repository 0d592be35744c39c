import { ACTIVE_JOB_STATUSES, Conflict, type JobKind, type JobStatus } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { constraintViolation, translateConstraintErrors } from "../../db/constraint-errors.ts";
import { lockRow } from "../../db/lock.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";

const INCLUDE = {
  devices: { select: { deviceId: true, burnIn: true }, orderBy: { deviceId: "asc" } },
} as const satisfies Prisma.JobInclude;
export type JobRow = Prisma.JobGetPayload<{ include: typeof INCLUDE }>;
/** Fields a report or a transition changes (version and updatedAt are the repo's). */
export type JobUpdate = Prisma.JobUncheckedUpdateInput;

export interface JobFilter {
  statuses?: readonly JobStatus[] | undefined;
  kind?: JobKind | undefined;
  siteId?: string | undefined;
  deviceId?: string | undefined;
}

export interface NewJob {
  kind: JobKind;
  siteId: string;
  /** The kind's parameters, as validated. */
  params: object;
  createdBy: string;
}

function where(f: JobFilter): Prisma.JobWhereInput {
  return {
    ...(f.statuses ? { status: { in: [...f.statuses] } } : {}),
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.siteId ? { siteId: f.siteId } : {}),
    ...(f.deviceId ? { devices: { some: { deviceId: f.deviceId } } } : {}),
  };
}

/** Job rows, and their claims on devices (job_devices: at most one active claim per device). */
export const jobRepo = {
  async list(db: Db, filter: JobFilter, page: PageRequest): Promise<RowPage<JobRow>> {
    return keysetRows(
      { findMany: (args) => db.job.findMany({ ...args, include: INCLUDE }), count: (args) => db.job.count(args) },
      where(filter),
      page,
    );
  },

  async findById(db: Db, id: string): Promise<JobRow | null> {
    return db.job.findUnique({ where: { id }, include: INCLUDE });
  },

  /** Reads the job and locks it for the rest of the transaction. */
  async lockById(db: Db, id: string): Promise<JobRow | null> {
    return (await lockRow(db, "jobs", id)) ? this.findById(db, id) : null;
  },

  /** Active claims on any of these devices, with the name of the job holding each. */
  async activeClaims(db: Db, deviceIds: string[]): Promise<{ deviceId: string; jobName: string }[]> {
    const busy = await db.jobDevice.findMany({
      where: { deviceId: { in: deviceIds }, active: true },
      include: { job: { select: { name: true } } },
    });
    return busy.map((b) => ({ deviceId: b.deviceId, jobName: b.job.name }));
  },

  /**
   * Serialises job creations naming the same device (as a job's device or as a node swap's
   * spare) until the transaction ends: transaction-scoped advisory locks, one per device, taken
   * in id order. Not the devices' rows: a reflection push locks those while it applies, and a
   * creation holding them while it writes its job, audit and feed rows deadlocked with it.
   */
  async lockDevices(db: Db, deviceIds: string[]): Promise<void> {
    if (deviceIds.length)
      await db.$executeRawUnsafe(
        `SELECT pg_advisory_xact_lock(hashtext('job-device'), hashtext(id))
           FROM unnest($1::text[]) AS id ORDER BY id`,
        [...new Set(deviceIds.map((id) => id.toLowerCase()))],
      );
  },

  /** Active node swaps whose spare is one of these devices, with each swap's name. */
  async activeSwapsOfSpares(db: Db, deviceIds: string[]): Promise<{ deviceId: string; jobName: string }[]> {
    return db.$queryRawUnsafe<{ deviceId: string; jobName: string }[]>(
      `SELECT lower(params->>'spareDeviceId') AS "deviceId", name AS "jobName" FROM jobs
        WHERE kind = 'NODE_SWAP' AND status = ANY($2::job_status[])
          AND (params->>'spareDeviceId')::uuid = ANY($1::uuid[])`,
      deviceIds,
      ACTIVE_JOB_STATUSES,
    );
  },

  /**
   * Creates the job under a name from `name()` and claims its devices. A name another job has
   * (the unique index refuses it) is retried with a new one, inside a savepoint so the caller's
   * transaction survives; a device another job claimed meanwhile is a 409.
   */
  async create(db: Db, data: NewJob, deviceIds: string[], name: () => string): Promise<JobRow> {
    for (let attempt = 0; ; attempt++) {
      await db.$executeRawUnsafe("SAVEPOINT job_create");
      try {
        const job = await db.job.create({
          data: { ...data, params: data.params, name: name() },
        });
        await db.jobDevice.createMany({ data: deviceIds.map((deviceId) => ({ jobId: job.id, deviceId })) }).catch(
          translateConstraintErrors({
            unique: new Conflict(
              "device_has_active_job",
              "A device of this job already has an active job; cancel it or wait for it to end",
            ),
          }),
        );
        return (await this.findById(db, job.id))!;
      } catch (err) {
        const violation = constraintViolation(err);
        const nameTaken = violation?.kind === "unique" && violation.constraint.includes("name");
        if (!nameTaken || attempt >= 3) throw err;
        await db.$executeRawUnsafe("ROLLBACK TO SAVEPOINT job_create");
      }
    }
  },

  async update(db: Db, id: string, data: JobUpdate): Promise<JobRow> {
    return db.job.update({
      where: { id },
      data: { ...data, version: { increment: 1 }, updatedAt: new Date() },
      include: INCLUDE,
    });
  },

  /** A burn-in's result on one of its devices. */
  async setBurnIn(db: Db, jobId: string, deviceId: string, result: object): Promise<void> {
    await db.jobDevice.update({
      where: { jobId_deviceId: { jobId, deviceId } },
      data: { burnIn: result },
    });
  },

  /** An ended job's devices are free for another job. */
  async releaseDevices(db: Db, jobId: string): Promise<void> {
    await db.jobDevice.updateMany({ where: { jobId }, data: { active: false } });
  },
};
export type JobRepo = typeof jobRepo;
