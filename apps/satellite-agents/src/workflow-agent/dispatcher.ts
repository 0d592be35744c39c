/**
 * The job dispatcher, a controller: it observes its site's active jobs in the hub and, per job,
 * brings Temporal and the hub into line:
 *
 *  - PENDING: reports SUBMITTED, then starts the kind's workflow with workflow id = job id,
 *    refusing duplicates even of a closed workflow: an agent restarted at any point finds the
 *    job SUBMITTED and starts it again, or finds the workflow already there (counted as
 *    success), and a job never runs twice.
 *  - SUBMITTED / RUNNING: describes the workflow (SUBMITTED without one: starts it) and queries
 *    its steps: RUNNING once a step started, progress and steps as they change, and the outcome
 *    when it closed (SUCCEEDED, FAILED with the failed step and its cause, CANCELLED).
 *  - CANCELLING: requests the workflow's cancellation (idempotent), then watches it end.
 *  - An operator's signal on a running job (REPAIR) is forwarded to its workflow as the Temporal
 *    signal OPERATOR_SIGNAL, once per run of this agent: the workflow keeps the first it gets, so
 *    a restarted agent forwarding it again changes nothing.
 *
 * The hub ignores a report that changes nothing, so a cycle may repeat one safely.
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  isGrpcServiceError,
  ServiceError,
  type Client,
  type Connection,
  type WorkflowHandle,
} from "@temporalio/client";
import type { Logger } from "pino";
import { HubApiError, type HubClient } from "@fm/clients";
import type { Job, JobReport, Site } from "@fm/domain";
import {
  JOB_WORKFLOWS,
  OPERATOR_SIGNAL,
  PROGRESS_QUERY,
  hasWorkflow,
  workflowInputOf,
  type JobWorkflowResult,
  type WorkflowProgress,
} from "@fm/domain/workflows";
import type { ControllerSpec } from "../runtime/controller.ts";
import { describeError } from "../runtime/log.ts";
import { hubReason } from "../runtime/loop.ts";
import { completedReport, failedReport, finalSteps, logsUrlOf, progressReport, workflowFailure } from "./reports.ts";
import type { WorkflowFailure } from "./reports.ts";

export const JOB_ACTIONS = ["started", "reported", "unchanged", "cancel-requested"] as const;
export type JobAction = (typeof JOB_ACTIONS)[number];

export interface DispatcherDeps {
  hub: HubClient;
  temporal: Client;
  /** The Temporal connection, for the deadline of each job's calls. */
  connection: Connection;
  site: Site;
  taskQueue: string;
  namespace: string;
  log: Logger;
  now: () => number;
  /** Jobs handled at once. */
  concurrency: number;
  /** How long a progress query may take (no worker running: it fails). */
  queryTimeoutMs: number;
  /** FM_LOGS_EXPLORER_URL: linked from failed jobs, with `{jobId}` replaced. */
  logsExplorerUrl?: string | undefined;
  /** Deadline of the Temporal calls for one job. */
  temporalTimeoutMs: number;
}

export class JobDispatcher implements ControllerSpec<Job, JobAction> {
  readonly store = "workflow";
  readonly actions = JOB_ACTIONS;
  // Its work is the hub's job list: through a hub outage it restart-loops, as the runbook expects
  // (FleetManagerWorkflowAgentStale fires with the API alerts).
  readonly hubOutage = "restart";
  readonly concurrency: number;
  /** History length of each running job's workflow at its last progress report. */
  private readonly reported = new Map<string, number>();
  /** Jobs whose operator signal this agent forwarded to the workflow. */
  private readonly signalled = new Set<string>();

  constructor(private readonly deps: DispatcherDeps) {
    this.concurrency = deps.concurrency;
  }

  async observe(): Promise<Job[]> {
    const jobs: Job[] = [];
    for await (const j of this.deps.hub.allJobs({ site: this.deps.site.id, active: true })) jobs.push(j);
    const listed = new Set(jobs.map((j) => j.id));
    for (const id of this.reported.keys()) if (!listed.has(id)) this.reported.delete(id);
    for (const id of this.signalled) if (!listed.has(id)) this.signalled.delete(id);
    return jobs;
  }

  act(job: Job): Promise<JobAction> {
    const { connection, now, temporalTimeoutMs } = this.deps;
    return connection.withDeadline(now() + temporalTimeoutMs, () =>
      job.status === "PENDING" ? this.start(job) : this.watch(job),
    );
  }

  describeItem(job: Job): Record<string, unknown> {
    return { job: job.name, jobId: job.id, status: job.status };
  }

  /** The hub refusing one report (4xx) is that job's problem; anything else is an outage. */
  isItemFailure(err: unknown): boolean {
    return err instanceof HubApiError && err.status >= 400 && err.status < 500;
  }

  classifyObserveError(err: unknown): string {
    return err instanceof HubApiError ? "hub_error" : "hub_unavailable";
  }

  classifyActError(err: unknown): string {
    return err instanceof ServiceError || isGrpcServiceError(err) ? "temporal_unavailable" : hubReason(err);
  }

  private async report(job: Job, r: JobReport): Promise<JobAction> {
    const after = await this.deps.hub.reportJob(job.id, r);
    if (after.version === job.version) return "unchanged";
    this.deps.log.info(
      { job: job.name, jobId: job.id, from: job.status, to: after.status, progress: after.progress },
      after.status !== job.status ? `job ${after.status.toLowerCase()}` : "job progress",
    );
    return "reported";
  }

  /**
   * PENDING: reports SUBMITTED first, then starts the workflow. In that order a cancel that
   * arrives meanwhile finds a SUBMITTED job and goes through CANCELLING, which this agent turns
   * into a Temporal cancellation; an agent that dies between the two finds the job SUBMITTED
   * with no workflow and starts it (watch below).
   */
  private async start(job: Job): Promise<JobAction> {
    if (!hasWorkflow(job.kind)) {
      return this.report(job, {
        status: "FAILED",
        error: { message: `No workflow runs ${job.kind} jobs yet; the devices are untouched` },
      });
    }
    try {
      await this.report(job, { status: "SUBMITTED", workflowId: job.id });
    } catch (err) {
      if (err instanceof HubApiError && err.status === 409) return "unchanged"; // cancelled meanwhile: nothing started
      throw err;
    }
    return this.startWorkflow(job);
  }

  private async startWorkflow(job: Job): Promise<JobAction> {
    const { temporal, taskQueue, site, log } = this.deps;
    const input = workflowInputOf(job);
    if (!input) throw new Error(`no workflow runs ${job.kind} jobs`); // start() checked hasWorkflow
    try {
      await temporal.workflow.start(JOB_WORKFLOWS[input.kind], {
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

  /** SUBMITTED, RUNNING, CANCELLING: what Temporal shows of the job's workflow, reported. */
  private async watch(job: Job): Promise<JobAction> {
    const handle = this.deps.temporal.workflow.getHandle(job.workflowId ?? job.id);
    let action: JobAction = "unchanged";
    if (job.status === "CANCELLING") {
      await handle.cancel().catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // already closed: described below
      });
      action = "cancel-requested";
    }
    const workflow = await describeWorkflow(handle);
    if (!workflow) return this.missing(job);
    switch (workflow.status) {
      case "RUNNING":
        return this.running(job, handle, workflow.historyLength, action);
      case "COMPLETED":
        return this.report(job, completedReport(job, (await handle.result()) as JobWorkflowResult));
      case "CANCELLED": {
        const steps = finalSteps((await this.progressOf(handle))?.steps ?? job.steps, "CANCELLED");
        if (job.status !== "CANCELLING") await this.report(job, { status: "CANCELLING" }); // cancelled outside Fleet Manager
        return this.report({ ...job, status: "CANCELLING" }, { status: "CANCELLED", steps });
      }
      default: {
        // FAILED, TERMINATED, TIMED_OUT
        const failure = await failureOf(handle, workflow.status);
        const steps = failure.steps ?? (await this.progressOf(handle))?.steps ?? job.steps;
        return this.report(job, failedReport(failure, steps, logsUrlOf(this.deps.logsExplorerUrl, job.id)));
      }
    }
  }

  /** A running workflow: its steps and progress, reported when its history moved. */
  private async running(
    job: Job,
    handle: WorkflowHandle,
    historyLength: number,
    action: JobAction,
  ): Promise<JobAction> {
    if (job.signal && !this.signalled.has(job.id)) {
      await handle.signal(OPERATOR_SIGNAL, job.signal);
      this.signalled.add(job.id);
      this.deps.log.info(
        { job: job.name, jobId: job.id, outcome: job.signal.outcome },
        "operator signal forwarded to the workflow",
      );
    }
    // A workflow's steps change only with its history: an unchanged history needs neither
    // a query (work for the worker) nor a report (a hub transaction).
    if (this.reported.get(job.id) === historyLength && job.status !== "SUBMITTED") return action;
    const p = await this.progressOf(handle);
    if (!p) return action;
    const r = await this.report(job, progressReport(job, p));
    this.reported.set(job.id, historyLength);
    return r === "unchanged" ? action : r;
  }

  /** Temporal has no workflow for the job. */
  private missing(job: Job): Promise<JobAction> {
    // SUBMITTED without a workflow: the agent died between reporting and starting.
    if (job.status === "SUBMITTED") return this.startWorkflow(job);
    if (job.status === "CANCELLING") return this.report(job, { status: "CANCELLED" });
    return this.report(job, {
      status: "FAILED",
      error: {
        message: `Temporal has no workflow ${job.workflowId ?? job.id} (namespace ${this.deps.namespace}): it was deleted outside Fleet Manager`,
      },
    });
  }

  private async progressOf(handle: WorkflowHandle): Promise<WorkflowProgress | undefined> {
    try {
      return await withTimeout(handle.query<WorkflowProgress>(PROGRESS_QUERY), this.deps.queryTimeoutMs);
    } catch (err) {
      this.deps.log.debug({ err: describeError(err) }, "progress query failed (no worker?)");
      return undefined;
    }
  }
}

/** The workflow's status and history length; undefined when Temporal has no such workflow. */
async function describeWorkflow(
  handle: WorkflowHandle,
): Promise<{ status: string; historyLength: number } | undefined> {
  try {
    const d = await handle.describe();
    return { status: d.status.name, historyLength: d.historyLength };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** What the workflow's result rejects with, as the failure to show on the job. */
async function failureOf(handle: WorkflowHandle, status: string): Promise<WorkflowFailure> {
  try {
    await handle.result();
    return { message: `workflow ${status.toLowerCase()}` };
  } catch (err) {
    return workflowFailure(err);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
