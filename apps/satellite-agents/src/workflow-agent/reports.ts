/**
 * What the job dispatcher reports to the hub for what Temporal shows of a job's workflow: pure,
 * so every outcome is tested without Temporal (the I/O is in ./dispatcher.ts).
 */
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from "@temporalio/common";
import { WorkflowFailedError } from "@temporalio/client";
import type { Job, JobReport } from "@fm/domain";
import {
  STEP_FAILED,
  type JobStep,
  type JobWorkflowResult,
  type StepFailureDetails,
  type WorkflowProgress,
} from "@fm/domain/workflows";

/** The hub keeps job errors up to 4,000 characters. */
export const ERROR_MAX = 4000;

/** Why a job's workflow failed: the failed step's message, its innermost cause, and the steps. */
export interface WorkflowFailure {
  message: string;
  cause?: string;
  step?: string;
  steps?: JobStep[];
}

/** The steps of a closed workflow: those still pending or running end as `as`. */
export function finalSteps(steps: JobStep[], as: JobStep["status"]): JobStep[] {
  return steps.map((s) => (s.status === "PENDING" || s.status === "RUNNING" ? { ...s, status: as } : s));
}

/** A running workflow's steps and progress; a SUBMITTED job becomes RUNNING once a step started. */
export function progressReport(job: Job, p: WorkflowProgress): JobReport {
  const started = p.steps.some((s) => s.status !== "PENDING");
  const running = job.status === "SUBMITTED" && started;
  return { ...(running ? { status: "RUNNING" } : {}), steps: p.steps, progress: p.progress };
}

/**
 * A completed workflow. Skipped: the job was cancelled before the workflow did anything (the hub
 * may have moved it to CANCELLING since it was listed; a stale status is a 409, retried next cycle).
 */
export function completedReport(job: Job, result: JobWorkflowResult): JobReport {
  if (!result.skipped) return { status: "SUCCEEDED", steps: result.steps, progress: 1 };
  return job.status === "CANCELLING" || job.cancelRequestedAt
    ? { status: "CANCELLED", steps: result.steps }
    : { status: "FAILED", steps: result.steps, error: { message: `The workflow did nothing: ${result.skipped}` } };
}

/**
 * The site's log explorer (FM_LOGS_EXPLORER_URL) queried for one job: `{jobId}` in the template
 * becomes the job's id (URL-encoded), so a Grafana Explore URL whose query filters on it opens
 * the job's log lines.
 */
export function logsUrlOf(template: string | undefined, jobId: string): string | undefined {
  return template ? template.replaceAll("{jobId}", encodeURIComponent(jobId)) : undefined;
}

/**
 * A workflow that failed, was terminated or timed out; `steps` are its last known steps, and
 * `logsUrl` where its log lines are read.
 */
export function failedReport(failure: WorkflowFailure, steps: JobStep[], logsUrl?: string): JobReport {
  return {
    status: "FAILED",
    ...(logsUrl ? { logsUrl } : {}),
    steps: failure.steps ?? finalSteps(steps, "FAILED"),
    error: {
      message: failure.message.slice(0, ERROR_MAX),
      ...(failure.cause ? { cause: failure.cause.slice(0, ERROR_MAX) } : {}),
      ...(failure.step ? { step: failure.step } : {}),
    },
  };
}

/** The failure to show on the job, from what the workflow's result rejected with. */
export function workflowFailure(err: unknown): WorkflowFailure {
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
