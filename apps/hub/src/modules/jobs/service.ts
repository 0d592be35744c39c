/**
 * Jobs: created by operators and automation, picked up by the site's workflow agent. Creation
 * checks every device against the kind (domain `jobRefusal`), requires one site, and claims the
 * devices in job_devices, whose partial unique index guarantees one active job per device even
 * under concurrent requests. Every change is audited and goes to the feed.
 */
import {
  BadRequest,
  Conflict,
  DEFAULT_IMAGE_SOURCE_POLICY,
  Forbidden,
  NotFound,
  Unprocessable,
  agentServesSite,
  burnInRefusal,
  jobRefusal,
  parseImageSource,
  siteJobRefusal,
  ACTIVE_JOB_STATUSES,
  SIGNALLED_JOB_KINDS,
  TERMINAL_JOB_STATUSES,
} from "@fm/domain";
import type {
  ImageSourcePolicy,
  Job,
  JobCreate,
  JobList,
  JobListQuery,
  JobReport,
  JobSignal,
  JobSignalCreate,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { keysetList } from "../../lib/paging.ts";
import { recordChange } from "../../changes/recorder.ts";
import { deviceRows, type DeviceRow } from "../devices/public.ts";
import type { DeviceService } from "../devices/service.ts";
import { requireSite, resolveSiteId } from "../sites/public.ts";
import { transition, updateJob } from "./lifecycle.ts";
import { jobName } from "./names.ts";
import { REPORTERS, applyReport } from "./report.ts";
import type { JobFilter, JobRepo, JobRow } from "./repo.ts";
import { toJob } from "./representation.ts";

const notFound = (id: string) => new NotFound("job_not_found", `No job with id ${id}`);

export function createJobService({
  prisma,
  repo,
  devices,
  imagePolicy = DEFAULT_IMAGE_SOURCE_POLICY,
}: {
  prisma: PrismaClient;
  repo: JobRepo;
  devices: DeviceService;
  /** What an IMAGE_NODE image may be beyond the contract's rule (FM_IMAGE_ALLOW_HTTP, FM_IMAGE_HOSTS). */
  imagePolicy?: ImageSourcePolicy;
}) {
  async function lock(tx: Db, id: string): Promise<JobRow> {
    const row = await repo.lockById(tx, id);
    if (!row) throw notFound(id);
    return row;
  }

  /** The job's devices, all known, all at one site, each fit for the kind and free of other jobs. */
  async function checkDevices(tx: Db, input: JobCreate, ids: string[]): Promise<DeviceRow[]> {
    const found = await deviceRows.findByIds(tx, ids);
    const missing = ids.filter((id) => !found.some((d) => d.id === id));
    if (missing.length)
      throw new Unprocessable("unknown_device", `No device with id ${missing.join(", ")}`, {
        errors: missing.map((id) => ({
          path: `body.deviceIds.${input.deviceIds.indexOf(id)}`,
          message: "unknown device",
        })),
      });
    if (new Set(found.map((d) => d.siteId)).size > 1)
      throw new Unprocessable(
        "devices_span_sites",
        "A job's devices must all be at one site: its workflow runs on that site's satellite",
      );
    const siteRefusal = siteJobRefusal(input.kind, await requireSite(tx, found[0]!.siteId));
    if (siteRefusal) throw new Conflict("site_state_conflict", siteRefusal);
    if (input.kind === "NODE_SWAP") await checkSpare(tx, input.params.spareDeviceId, found);
    const refusals = found
      .map((d) => jobRefusal(input.kind, devices.toDevice(d)))
      .filter((r): r is string => r !== null);
    if (refusals.length)
      throw new Conflict("device_state_conflict", refusals.join("; "), {
        errors: refusals.map((message) => ({ path: "body.deviceIds", message })),
      });
    if (input.kind === "RELEASE") {
      const gated = found
        .map((d) => burnInRefusal(devices.toDevice(d), input.params.burnInOverride))
        .filter((r): r is string => r !== null);
      if (gated.length)
        throw new Conflict("burn_in_failed", gated.join("; "), {
          errors: gated.map((message) => ({ path: "body.params.burnInOverride", message })),
        });
    }
    const busy = await repo.activeClaims(tx, ids);
    if (busy.length) {
      const names = busy.map((b) => `${found.find((d) => d.id === b.deviceId)!.name} (${b.jobName})`);
      throw new Conflict(
        "device_has_active_job",
        `Device(s) already have an active job: ${names.join(", ")}; cancel it or wait for it to end`,
      );
    }
    // A node swap's spare is its job's too while the swap runs: no other job may take it (an
    // ENROL of it, a second swap into another tray), nor may the swap take a busy spare.
    const spare = input.kind === "NODE_SWAP" ? input.params.spareDeviceId : null;
    const spares = await repo.activeSwapsOfSpares(tx, spare ? [...ids, spare] : ids);
    const spareBusy = spare ? await repo.activeClaims(tx, [spare]) : [];
    if (spares.length || spareBusy.length) {
      const names = [
        ...spares.map(
          (b) => `${found.find((d) => d.id === b.deviceId)?.name ?? "the spare"} is the spare of ${b.jobName}`,
        ),
        ...spareBusy.map((b) => `the spare is in ${b.jobName}`),
      ];
      throw new Conflict(
        "device_has_active_job",
        `${names.join("; ")}; cancel that job or wait for it to end`,
        spare ? { errors: [{ path: "body.params.spareDeviceId", message: "busy" }] } : undefined,
      );
    }
    return found;
  }

  /**
   * A node swap replaces one failed tray with a spare the hub knows at the same site (whether the
   * spare is fit, never enrolled and staged, its workflow checks against NetBox and Ironic).
   */
  async function checkSpare(tx: Db, spareId: string, found: DeviceRow[]): Promise<void> {
    if (found.length !== 1)
      throw new Unprocessable("node_swap_one_device", "A node swap replaces one failed tray: give one device", {
        errors: [{ path: "body.deviceIds", message: "one device" }],
      });
    const [spare] = await deviceRows.findByIds(tx, [spareId]);
    const path = "body.params.spareDeviceId";
    if (!spare)
      throw new Unprocessable("unknown_device", `No device with id ${spareId}`, {
        errors: [{ path, message: "unknown device" }],
      });
    if (spare.id === found[0]!.id)
      throw new Unprocessable("spare_is_failed_device", `${spare.name} cannot be its own spare`, {
        errors: [{ path, message: "the failed tray itself" }],
      });
    if (spare.siteId !== found[0]!.siteId)
      throw new Unprocessable(
        "devices_span_sites",
        `The spare ${spare.name} is at another site than ${found[0]!.name}: a swap happens within one site`,
        { errors: [{ path, message: "at another site" }] },
      );
  }

  /** Each device handed over despite a failed last burn-in, with the operator's reason, in the audit. */
  async function recordOverrides(tx: Db, ctx: RequestContext, found: DeviceRow[], job: JobRow, reason: string) {
    for (const d of found) {
      const burnIn = devices.toDevice(d).burnIn;
      if (burnIn?.status !== "FAILED") continue;
      await recordChange(tx, ctx, {
        resourceType: "device_burn_in_override",
        resourceId: d.id,
        siteId: d.siteId,
        verb: "created",
        before: null,
        after: { device: d.name, failedBurnInJobId: burnIn.jobId, releaseJobId: job.id, reason },
        action: "device.burn_in_override",
        feed: false,
      });
    }
  }

  return {
    async create(ctx: RequestContext, input: JobCreate): Promise<Job> {
      // The parameters on their own first: a bad image is a 400 whatever state the devices are in.
      if (input.kind === "IMAGE_NODE") {
        const source = parseImageSource(input.params.image, imagePolicy);
        if (!source.ok)
          throw new BadRequest("invalid_image", `params.image ${source.message}`, {
            errors: [{ path: "body.params.image", message: source.message }],
          });
      }
      const ids = [...new Set(input.deviceIds)];
      const row = await prisma.$transaction(async (tx) => {
        await repo.lockDevices(tx, input.kind === "NODE_SWAP" ? [...ids, input.params.spareDeviceId] : ids);
        const found = await checkDevices(tx, input, ids);
        const siteId = found[0]!.siteId;
        const created = await repo.create(
          tx,
          { kind: input.kind, siteId, params: input.params, createdBy: ctx.principal.id },
          ids,
          () => jobName(input.kind),
        );
        await recordChange(tx, ctx, {
          resourceType: "job",
          resourceId: created.id,
          siteId,
          verb: "created",
          before: null,
          after: toJob(created),
        });
        if (input.kind === "RELEASE" && input.params.burnInOverride)
          await recordOverrides(tx, ctx, found, created, input.params.burnInOverride.reason);
        return created;
      });
      return toJob(row);
    },

    async list(q: JobListQuery): Promise<JobList> {
      const filter: JobFilter = {
        kind: q.kind,
        siteId: q.site ? await resolveSiteId(prisma, q.site, "site") : undefined,
        deviceId: q.device,
        // ?active= narrows ?status= (both given and disjoint: nothing matches)
        statuses:
          q.active === undefined
            ? q.status && [q.status]
            : (q.active ? ACTIVE_JOB_STATUSES : TERMINAL_JOB_STATUSES).filter((s) => !q.status || s === q.status),
      };
      return keysetList(q, (page) => repo.list(prisma, filter, page), toJob);
    },

    async get(id: string): Promise<Job> {
      const row = await repo.findById(prisma, id);
      if (!row) throw notFound(id);
      return toJob(row);
    },

    /**
     * A report from the site's workflow agent or Temporal worker (see report.ts). Only an agent
     * of a satellite serving the job's site may report.
     */
    async report(ctx: RequestContext, id: string, report: JobReport): Promise<Job> {
      const agent = ctx.principal.agent;
      if (!agent || !REPORTERS.has(agent.kind))
        throw new Forbidden(
          "agent_not_allowed",
          "Only a satellite's workflow agent or Temporal worker reports on jobs",
        );
      const row = await prisma.$transaction(async (tx) => {
        const job = await lock(tx, id);
        if (!agentServesSite(agent, job.siteId))
          throw new Forbidden(
            "site_not_served",
            `Satellite ${agent.satellite} does not serve the site of job ${job.name}`,
          );
        return applyReport(tx, ctx, devices, job, report);
      });
      return toJob(row);
    },

    /**
     * An operator's signal to a job that waits for one (REPAIR): kept on the job, which the site's
     * workflow agent forwards to the workflow. One signal per job: the same one again changes
     * nothing (a retried request), another one is a 409, as is a signal to an ended job.
     */
    async signal(ctx: RequestContext, id: string, input: JobSignalCreate): Promise<Job> {
      const row = await prisma.$transaction(async (tx) => {
        const job = await lock(tx, id);
        if (!SIGNALLED_JOB_KINDS.includes(job.kind))
          throw new Unprocessable(
            "job_takes_no_signal",
            `A ${job.kind} job waits for no operator; only ${SIGNALLED_JOB_KINDS.join(", ")} jobs take a signal`,
          );
        const current = job.signal as JobSignal | null;
        const note = input.note ?? null;
        if (current) {
          if (current.outcome === input.outcome && current.note === note) return job;
          throw new Conflict(
            "job_already_signalled",
            `Job ${job.name} was already signalled '${current.outcome}' by ${current.signalledBy}`,
          );
        }
        if (!ACTIVE_JOB_STATUSES.includes(job.status) || job.status === "CANCELLING")
          throw new Conflict("job_finished", `Job ${job.name} is ${job.status}: it waits for no signal`);
        const signal: JobSignal = {
          outcome: input.outcome,
          note,
          signalledBy: ctx.principal.id,
          signalledAt: new Date().toISOString(),
        };
        return updateJob(tx, ctx, job, { signal });
      });
      ctx.log.info({ jobId: id, outcome: input.outcome }, "job signalled by operator");
      return toJob(row);
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
      return toJob(row);
    },
  };
}

export type JobService = ReturnType<typeof createJobService>;
