/** `fleetctl api job ...` */
import { JobListQuerySchema, JobListSchema, JobSignalCreateSchema, type Job } from "@fm/domain";
import type { HubClient } from "@fm/clients";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { parseJobKind, parseJobParams } from "../job-params.ts";
import { renderList, renderOne, statusTone, type View } from "../output.ts";
import {
  collect,
  deviceId,
  isUuid,
  notFound,
  output,
  session,
  siteId,
  truncationNote,
  usageFromIssues,
} from "./common.ts";

export const JOB_VIEW: View<Job> = {
  kind: "job",
  name: (j) => j.name,
  columns: [
    { header: "name", value: (j) => j.name },
    { header: "kind", value: (j) => j.kind },
    { header: "status", value: (j) => j.status, tone: statusTone },
    { header: "progress", value: (j) => `${Math.round(j.progress * 100)}%` },
    { header: "devices", value: (j) => j.deviceIds.length },
    { header: "created", value: (j) => j.createdAt },
    { header: "created by", value: (j) => j.createdBy, wide: true },
    { header: "error", value: (j) => j.error?.message, wide: true },
    { header: "id", value: (j) => j.id, wide: true },
  ],
};

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const o = ctx.opts;
  const query = {
    status: (o.status as string | undefined)?.toUpperCase(),
    kind: o.kind === undefined ? undefined : parseJobKind(String(o.kind)),
    site: o.site as string | undefined,
    device: o.device as string | undefined,
    active: o.active as string | undefined,
    order: o.order as string | undefined,
  };
  const checked = JobListQuerySchema.safeParse({ ...query, device: undefined });
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  if (query.site) query.site = await siteId(hub, query.site);
  if (query.device) query.device = await deviceId(hub, query.device);
  const r = await collect(
    ctx,
    async (p) => (await hub.request("GET", "/api/v1/jobs/", JobListSchema, { query: { ...query, ...p } })).body,
  );
  ctx.out(await renderList(JOB_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

/** A job by id, or by its name (active jobs are searched first: the ones people name). */
export async function findJob(hub: HubClient, idOrName: string): Promise<Job> {
  if (isUuid(idOrName)) return hub.getJob(idOrName);
  for (const active of [true, false]) for await (const j of hub.allJobs({ active })) if (j.name === idOrName) return j;
  throw notFound("job", idOrName);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const job = await findJob(hub, String(ctx.args[0]));
  if (out.format === "table" || out.format === "wide") {
    ctx.out(await renderOne(JOB_VIEW, job, out));
    const { renderSteps } = await import("../job-wait.ts");
    ctx.out(renderSteps(job));
  } else ctx.out(await renderOne(JOB_VIEW, job, out));
}

export async function create(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const kind = parseJobKind(String(ctx.opts.kind));
  // Checked before anything is sent, even before device names are looked up.
  const params = parseJobParams(kind, ctx.opts.params as string | undefined, ctx.opts.param as string[] | undefined);
  const devices = ctx.opts.device as string[];
  if (devices.length > 100) throw new UsageError("a job takes at most 100 devices");
  const { hub } = await session(ctx);
  const deviceIds = await Promise.all(devices.map((d) => deviceId(hub, d)));
  const key = (ctx.opts.idempotencyKey as string | undefined) ?? crypto.randomUUID();
  const job = await hub.createJob({ kind, deviceIds, params } as Parameters<HubClient["createJob"]>[0], key);
  if (ctx.opts.wait) {
    const { waitForJob } = await import("../job-wait.ts");
    await waitForJob(ctx, hub, job, out);
    return;
  }
  ctx.out(await renderOne(JOB_VIEW, job, out));
}

export async function cancel(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const job = await findJob(hub, String(ctx.args[0]));
  ctx.out(await renderOne(JOB_VIEW, await hub.cancelJob(job.id), out));
}

export async function signal(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const body = JobSignalCreateSchema.safeParse({ outcome: ctx.opts.outcome, note: ctx.opts.note });
  if (!body.success) throw usageFromIssues(body.error.issues);
  const { hub } = await session(ctx);
  const job = await findJob(hub, String(ctx.args[0]));
  ctx.out(await renderOne(JOB_VIEW, await hub.signalJob(job.id, body.data), out));
}

export async function wait(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const job = await findJob(hub, String(ctx.args[0]));
  const { waitForJob } = await import("../job-wait.ts");
  await waitForJob(ctx, hub, job, out);
}
