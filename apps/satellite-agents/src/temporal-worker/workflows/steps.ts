/**
 * The step bookkeeping every job workflow shares: the steps of its kind (all shown from the
 * start), their status and progress as the progress query answers them, and the failure a step
 * ends the workflow with.
 */
import { ApplicationFailure, defineQuery, isCancellation, setHandler } from "@temporalio/workflow";
import {
  PROGRESS_QUERY,
  STEP_FAILED,
  type DevicePlan,
  type JobPlan,
  type JobStep,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type StepFailureDetails,
  type WorkflowProgress,
} from "@fm/domain/workflows";
import { quick } from "./proxies.ts";

/** The hub keeps step messages up to 2,000 characters and errors up to 4,000. */
export const MESSAGE_MAX = 2000;

export const progressQuery = defineQuery<WorkflowProgress>(PROGRESS_QUERY);

/** The steps of one job and their progress, answered by the progress query. */
export class Steps {
  readonly steps: JobStep[];

  constructor(names: readonly string[]) {
    this.steps = names.map((name) => ({ name, status: "PENDING" }));
    setHandler(progressQuery, () => this.snapshot());
  }

  snapshot(): WorkflowProgress {
    const done = this.steps.filter((s) => s.status === "SUCCEEDED" || s.status === "SKIPPED").length;
    const running = this.steps.filter((s) => s.status === "RUNNING").reduce((sum, s) => sum + (s.progress ?? 0), 0);
    return { steps: this.steps.map((s) => ({ ...s })), progress: Math.min(1, (done + running) / this.steps.length) };
  }

  step(name: string): JobStep {
    const s = this.steps.find((x) => x.name === name);
    if (!s) throw new Error(`unknown step ${name}`);
    return s;
  }

  skip(name: string, message: string): void {
    Object.assign(this.step(name), { status: "SKIPPED", message, finishedAt: new Date().toISOString() });
  }

  /** Runs a step; `fn` reports per-device progress through `tick(done, total)`. */
  async run<T>(
    name: string,
    fn: (tick: (done: number, total: number) => void) => Promise<T>,
    message?: (r: T) => string,
  ): Promise<T> {
    const s = this.step(name);
    Object.assign(s, { status: "RUNNING", startedAt: new Date().toISOString(), progress: 0 });
    try {
      const result = await fn((done, total) => {
        s.progress = total ? done / total : 1;
      });
      Object.assign(s, {
        status: "SUCCEEDED",
        progress: 1,
        finishedAt: new Date().toISOString(),
        ...(message ? { message: message(result).slice(0, MESSAGE_MAX) } : {}),
      });
      return result;
    } catch (err) {
      if (isCancellation(err)) {
        Object.assign(s, { status: "CANCELLED", finishedAt: new Date().toISOString() });
        for (const rest of this.steps) if (rest.status === "PENDING") rest.status = "CANCELLED";
        throw err;
      }
      const reason = failureMessage(err);
      Object.assign(s, {
        status: "FAILED",
        message: reason.slice(0, MESSAGE_MAX),
        finishedAt: new Date().toISOString(),
      });
      throw this.failure(name, reason, err instanceof Error ? err : undefined);
    }
  }

  /** The failure that ends the workflow at step `name` (nothing retries it: the step already failed). */
  failure(name: string, reason: string, cause?: Error): ApplicationFailure {
    const details: StepFailureDetails = { step: name, steps: this.snapshot().steps };
    return ApplicationFailure.create({
      message: `${name}: ${reason}`.slice(0, MESSAGE_MAX),
      type: STEP_FAILED,
      nonRetryable: true,
      details: [details],
      cause,
    });
  }
}

/** The innermost message: an activity failure wraps the activity's own error. */
function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** Runs `fn` for every device at once, counting finished devices as the step's progress. */
export async function eachDevice<T>(
  devices: DevicePlan[],
  tick: (done: number, total: number) => void,
  fn: (d: DevicePlan) => Promise<T>,
): Promise<T[]> {
  let done = 0;
  tick(0, devices.length);
  return Promise.all(
    devices.map(async (d) => {
      const r = await fn(d);
      tick(++done, devices.length);
      return r;
    }),
  );
}

/** Reads the job and its devices from the hub; null when the job is no longer active (cancelled before it ran). */
export async function preflight(steps: Steps, input: JobWorkflowInput): Promise<JobPlan | null> {
  return steps.run(
    "preflight",
    () => quick.preflight({ jobId: input.jobId, kind: input.kind }),
    (plan) => (plan ? `${plan.devices.length} device(s) at ${plan.site.slug}` : "job no longer active"),
  );
}

/** The result of a job found no longer active: every step left is skipped. */
export function skipped(steps: Steps, why: string): JobWorkflowResult {
  for (const s of steps.steps) if (s.status === "PENDING") steps.skip(s.name, why);
  return { ...steps.snapshot(), skipped: why };
}
