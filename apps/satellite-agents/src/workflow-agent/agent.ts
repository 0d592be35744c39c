/**
 * The workflow agent: hands its site's jobs to Temporal and reports them back to the hub.
 * Every FM_REFLECT_INTERVAL_S it lists the site's active jobs (store `workflow` in the
 * reflector metrics, which FleetManagerWorkflowAgentStale watches) and, per job:
 *
 *  - PENDING: reports SUBMITTED, then starts the kind's workflow with workflow id = job id,
 *    refusing duplicates even of a closed workflow: an agent restarted at any point finds the
 *    job SUBMITTED and starts it again, or finds the workflow already there (counted as
 *    success), and a job never runs twice.
 *  - SUBMITTED / RUNNING: describes the workflow (SUBMITTED without one: starts it) and
 *    queries its steps: RUNNING once a step
 *    started, progress and steps as they change, and the outcome when it closed (SUCCEEDED,
 *    FAILED with the failed step and its cause, CANCELLED).
 *  - CANCELLING: requests the workflow's cancellation (idempotent), then watches it end.
 *
 * The hub ignores a report that changes nothing, so a cycle may repeat one safely.
 */
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from "@temporalio/client";
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from "@temporalio/common";
import { z } from "zod";
import { HubApiError } from "@fm/clients";
import type { Job, JobReport } from "@fm/domain";
import {
  JOB_WORKFLOWS,
  PROGRESS_QUERY,
  STEP_FAILED,
  hasWorkflow,
  taskQueueFor,
  type JobStep,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type StepFailureDetails,
  type WorkflowKind,
  type WorkflowProgress,
} from "@fm/domain/workflows";
import type { AgentContext, AgentDefinition } from "../runtime/agent.ts";
import type { ReflectorSpec } from "../runtime/reflector.ts";
import { describe } from "../runtime/reflector.ts";
import { TemporalEnv } from "./temporal.ts";

const env = {
  ...TemporalEnv,
  FM_WORKFLOW_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(10)
    .describe("Jobs handled at once per cycle"),
  FM_QUERY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(5000)
    .describe("How long a progress query may take (no worker running: it fails)"),
  FM_TEMPORAL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe("Deadline of Temporal calls for one job (without one, a call to a Temporal that is down can hang)"),
};
type WorkflowEnv = z.infer<z.ZodObject<typeof env>>;

/** The hub keeps job errors up to 4,000 characters. */
const ERROR_MAX = 4000;

export type JobAction = "started" | "reported" | "unchanged" | "cancel-requested" | "failed";

export function jobsReflector(
  ctx: AgentContext<WorkflowEnv>,
  client: Client,
  connection: Connection,
): ReflectorSpec<Job> {
  const { hub, site, log, config } = ctx;
  const taskQueue = config.TEMPORAL_TASK_QUEUE ?? taskQueueFor(site.slug);

  /** History length of each running job's workflow at its last progress report. */
  const reported = new Map<string, number>();

  const report = async (job: Job, r: JobReport): Promise<JobAction> => {
    const after = await hub.reportJob(job.id, r);
    if (after.version === job.version) return "unchanged";
    log.info(
      { job: job.name, jobId: job.id, from: job.status, to: after.status, progress: after.progress },
      after.status !== job.status ? `job ${after.status.toLowerCase()}` : "job progress",
    );
    return "reported";
  };

  /**
   * PENDING: reports SUBMITTED first, then starts the workflow. In that order a cancel that
   * arrives meanwhile finds a SUBMITTED job and goes through CANCELLING, which this agent turns
   * into a Temporal cancellation; an agent that dies between the two finds the job SUBMITTED
   * with no workflow and starts it (watch below).
   */
  async function start(job: Job): Promise<JobAction> {
    if (!hasWorkflow(job.kind)) {
      return report(job, {
        status: "FAILED",
        error: { message: `No workflow runs ${job.kind} jobs yet; the devices are untouched` },
      });
    }
    try {
      await report(job, { status: "SUBMITTED", workflowId: job.id });
    } catch (err) {
      if (err instanceof HubApiError && err.status === 409) return "unchanged"; // cancelled meanwhile: nothing started
      throw err;
    }
    return startWorkflow(job);
  }

  async function startWorkflow(job: Job): Promise<JobAction> {
    const kind = job.kind as WorkflowKind;
    const input: JobWorkflowInput = { jobId: job.id, jobName: job.name, kind, params: job.params };
    try {
      await client.workflow.start(JOB_WORKFLOWS[kind], {
        workflowId: job.id,
        taskQueue,
        args: [input],
        // Also a closed workflow of that id refuses: a job runs once, whatever restarts.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        memo: { job: job.name, kind: job.kind, site: site.slug },
      });
      log.info({ job: job.name, jobId: job.id, kind: job.kind, taskQueue }, "workflow started");
      return "started";
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      log.info({ job: job.name, jobId: job.id }, "workflow already started (an earlier run of this agent started it)");
      return "reported";
    }
  }

  async function progressOf(handle: WorkflowHandle): Promise<WorkflowProgress | undefined> {
    try {
      return await withTimeout(handle.query<WorkflowProgress>(PROGRESS_QUERY), config.FM_QUERY_TIMEOUT_MS);
    } catch (err) {
      log.debug({ err: describe(err) }, "progress query failed (no worker?)");
      return undefined;
    }
  }

  async function watch(job: Job): Promise<JobAction> {
    const handle = client.workflow.getHandle(job.workflowId ?? job.id);
    let action: JobAction = "unchanged";
    if (job.status === "CANCELLING") {
      await handle.cancel().catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // already closed: described below
      });
      action = "cancel-requested";
    }
    let status: string;
    let historyLength: number;
    try {
      const description = await handle.describe();
      status = description.status.name;
      historyLength = description.historyLength;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // SUBMITTED without a workflow: the agent died between reporting and starting.
      if (job.status === "SUBMITTED") return startWorkflow(job);
      if (job.status === "CANCELLING") return report(job, { status: "CANCELLED" });
      return report(job, {
        status: "FAILED",
        error: {
          message: `Temporal has no workflow ${job.workflowId ?? job.id} (namespace ${config.TEMPORAL_NAMESPACE}): it was deleted outside Fleet Manager`,
        },
      });
    }
    const finalSteps = (steps: JobStep[] | undefined, as: JobStep["status"]) =>
      (steps ?? job.steps).map((s) => (s.status === "PENDING" || s.status === "RUNNING" ? { ...s, status: as } : s));
    switch (status) {
      case "RUNNING": {
        // A workflow's steps change only with its history: an unchanged history needs neither
        // a query (work for the worker) nor a report (a hub transaction).
        if (reported.get(job.id) === historyLength && job.status !== "SUBMITTED") return action;
        const p = await progressOf(handle);
        if (!p) return action;
        const started = p.steps.some((s) => s.status !== "PENDING");
        const next = job.status === "SUBMITTED" && started ? "RUNNING" : undefined;
        const r = await report(job, { ...(next ? { status: next } : {}), steps: p.steps, progress: p.progress });
        reported.set(job.id, historyLength);
        return r === "unchanged" ? action : r;
      }
      case "COMPLETED": {
        const result = (await handle.result()) as JobWorkflowResult;
        // Skipped: the job was cancelled before the workflow did anything (the hub may have moved
        // it to CANCELLING since this agent listed it; a stale status is a 409, retried next cycle).
        if (result.skipped)
          return job.status === "CANCELLING" || job.cancelRequestedAt
            ? report(job, { status: "CANCELLED", steps: result.steps })
            : report(job, {
                status: "FAILED",
                steps: result.steps,
                error: { message: `The workflow did nothing: ${result.skipped}` },
              });
        return report(job, { status: "SUCCEEDED", steps: result.steps, progress: 1 });
      }
      case "CANCELLED": {
        const steps = finalSteps((await progressOf(handle))?.steps, "CANCELLED");
        if (job.status !== "CANCELLING") await report(job, { status: "CANCELLING" }); // cancelled outside Fleet Manager
        return report({ ...job, status: "CANCELLING" }, { status: "CANCELLED", steps });
      }
      default: {
        // FAILED, TERMINATED, TIMED_OUT
        const error = await failureOf(handle, status);
        const steps = error.steps ?? finalSteps((await progressOf(handle))?.steps, "FAILED");
        return report(job, {
          status: "FAILED",
          steps,
          error: {
            message: error.message.slice(0, ERROR_MAX),
            ...(error.cause ? { cause: error.cause.slice(0, ERROR_MAX) } : {}),
            ...(error.step ? { step: error.step } : {}),
          },
        });
      }
    }
  }

  async function dispatch(job: Job): Promise<JobAction> {
    return job.status === "PENDING" ? start(job) : watch(job);
  }

  return {
    store: "workflow",
    async list() {
      const jobs: Job[] = [];
      for await (const j of hub.allJobs({ site: site.id, active: true })) jobs.push(j);
      return jobs;
    },
    async push(jobs) {
      const listed = new Set(jobs.map((j) => j.id));
      for (const id of reported.keys()) if (!listed.has(id)) reported.delete(id);
      const counts: Record<JobAction, number> = {
        started: 0,
        reported: 0,
        unchanged: 0,
        "cancel-requested": 0,
        failed: 0,
      };
      const errors: unknown[] = [];
      await pool(jobs, config.FM_WORKFLOW_CONCURRENCY, async (job) => {
        try {
          counts[await connection.withDeadline(Date.now() + config.FM_TEMPORAL_TIMEOUT_MS, () => dispatch(job))]++;
        } catch (err) {
          counts.failed++;
          errors.push(err);
          log.error(
            { job: job.name, jobId: job.id, status: job.status, err: describe(err) },
            "job not handled; retrying next cycle",
          );
        }
      });
      // Every job failing for want of an answer is an outage (Temporal or the hub): a failed
      // cycle, with backoff. The hub refusing a report (4xx) is that job's problem, logged above.
      const outages = errors.filter((e) => !(e instanceof HubApiError && e.status >= 400 && e.status < 500));
      if (outages.length && outages.length === jobs.length) throw outages[0];
      return { jobs: jobs.length, ...counts };
    },
    classifyListError: (err) => (err instanceof HubApiError ? "hub_error" : "hub_unavailable"),
  };
}

/** The failure to show on the job: the failed step's message and its innermost cause. */
async function failureOf(
  handle: WorkflowHandle,
  status: string,
): Promise<{ message: string; cause?: string; step?: string; steps?: JobStep[] }> {
  try {
    await handle.result();
    return { message: `workflow ${status.toLowerCase()}` };
  } catch (err) {
    const failure = err instanceof WorkflowFailedError ? err.cause : err;
    if (failure instanceof TerminatedFailure)
      return { message: `The workflow was terminated in Temporal${failure.message ? `: ${failure.message}` : ""}` };
    if (failure instanceof TimeoutFailure) return { message: "The workflow timed out" };
    if (failure instanceof CancelledFailure) return { message: "The workflow was cancelled" };
    const details =
      failure instanceof ApplicationFailure && failure.type === STEP_FAILED
        ? (failure.details?.[0] as StepFailureDetails | undefined)
        : undefined;
    let inner: unknown = failure instanceof Error ? failure.cause : undefined;
    while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
    return {
      message: failure instanceof Error ? failure.message : String(failure),
      ...(inner instanceof Error
        ? { cause: `${inner instanceof ApplicationFailure && inner.type ? `${inner.type}: ` : ""}${inner.message}` }
        : {}),
      ...(details ? { step: details.step, steps: details.steps } : {}),
    };
  }
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

export const workflowAgent: AgentDefinition<typeof env> = {
  kind: "workflow",
  env,
  // The interval is the delay before a new job is picked up, and between progress reports.
  envDefaults: { FM_REFLECT_INTERVAL_S: "5" },
  async setup(ctx) {
    const connection = await Connection.connect({
      address: ctx.config.TEMPORAL_ADDRESS,
      connectTimeout: ctx.config.FM_HTTP_TIMEOUT_MS,
    });
    const client = new Client({ connection, namespace: ctx.config.TEMPORAL_NAMESPACE });
    ctx.log.info(
      {
        temporal: ctx.config.TEMPORAL_ADDRESS,
        namespace: ctx.config.TEMPORAL_NAMESPACE,
        taskQueue: ctx.config.TEMPORAL_TASK_QUEUE ?? taskQueueFor(ctx.site.slug),
      },
      "Starting job reflector",
    );
    return [jobsReflector(ctx, client, connection) as ReflectorSpec<unknown>];
  },
};
