/**
 * The job workflows (Temporal TypeScript SDK). Workflow code runs in Temporal's deterministic
 * sandbox and is replayed from history after a worker restart: it only sequences activities,
 * keeps the steps, and answers the progress query. Every effect on the world (Ironic, NetBox,
 * SLURM, the hub, files) is an activity in ./activities.ts, idempotent, so that a retry after a
 * worker died mid-activity never applies an effect twice.
 *
 * Changing the order or the activities of a released workflow breaks the replay of running
 * workflows: add a `patched()` branch instead, and keep the committed histories in
 * ./histories replaying (worker.replay.test.ts).
 */
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import {
  NON_RETRYABLE_FAILURES,
  PROGRESS_QUERY,
  STEP_FAILED,
  WORKFLOW_STEPS,
  type DevicePlan,
  type JobPlan,
  type JobStep,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type StepFailureDetails,
  type WorkflowProgress,
} from "@fm/domain/workflows";
import type { Activities } from "./activities.ts";

/**
 * Outages are retried without an attempt limit (1 s doubling to 1 min): giving up after a
 * quarter of an hour of a hub or Ironic outage would fail jobs halfway, with NetBox already
 * changed. What retrying cannot fix is thrown as one of NON_RETRYABLE_FAILURES.
 */
const retry = {
  initialInterval: "1s",
  backoffCoefficient: 2,
  maximumInterval: "1m",
  nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURES],
};
/**
 * Every activity heartbeats while it runs (a ticker in the activity), so a dead worker is
 * noticed within 10 s, while a slow source (requests of up to FM_HTTP_TIMEOUT_MS, retried)
 * never makes Temporal start a second attempt beside a first one still running.
 */
const quick = proxyActivities<Activities>({ startToCloseTimeout: "10m", heartbeatTimeout: "10s", retry });
/** Waiting on Ironic or SLURM: as long as the work takes. */
const waiting = proxyActivities<Activities>({ startToCloseTimeout: "8h", heartbeatTimeout: "10s", retry });
/** The hub keeps step messages up to 2,000 characters and errors up to 4,000. */
const MESSAGE_MAX = 2000;

export const progressQuery = defineQuery<WorkflowProgress>(PROGRESS_QUERY);

/** The steps of one job and their progress, answered by the progress query. */
class Steps {
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

  private step(name: string): JobStep {
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
      const details: StepFailureDetails = { step: name, steps: this.snapshot().steps };
      throw ApplicationFailure.create({
        message: `${name}: ${reason}`.slice(0, MESSAGE_MAX),
        type: STEP_FAILED,
        nonRetryable: true,
        details: [details],
        cause: err instanceof Error ? err : undefined,
      });
    }
  }
}

/** The innermost message: an activity failure wraps the activity's own error. */
function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** Runs `fn` for every device at once, counting finished devices as the step's progress. */
async function eachDevice<T>(
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
async function preflight(steps: Steps, input: JobWorkflowInput): Promise<JobPlan | null> {
  return steps.run(
    "preflight",
    () => quick.preflight({ jobId: input.jobId, kind: input.kind }),
    (plan) => (plan ? `${plan.devices.length} device(s) at ${plan.site.slug}` : "job no longer active"),
  );
}

function skipped(steps: Steps, why: string): JobWorkflowResult {
  for (const s of steps.steps) if (s.status === "PENDING") steps.skip(s.name, why);
  return { ...steps.snapshot(), skipped: why };
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export async function enrolWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.ENROL);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const { devices, site } = plan;
  await steps.run("netbox-check", (tick) => eachDevice(devices, tick, (d) => quick.netboxCheckStaged(d)));
  const nodes = await steps.run(
    "ironic-enroll",
    (tick) => eachDevice(devices, tick, (d) => waiting.ironicEnroll(d)),
    (uuids) => `node(s) ${uuids.join(", ")} manageable`.slice(0, MESSAGE_MAX),
  );
  const enrolled = devices.map((d, i) => ({ ...d, ironicNodeUuid: nodes[i]! }));
  await steps.run("ironic-inspect", (tick) => eachDevice(enrolled, tick, (d) => waiting.ironicInspect(d)));
  await steps.run("bmc-configure", (tick) => eachDevice(enrolled, tick, (d) => quick.configureBmc(d)));
  const dhcp = input.params.configureDhcp !== false && site.configureDhcp;
  if (dhcp) await steps.run("dhcp-configure", (tick) => eachDevice(enrolled, tick, (d) => quick.configureDhcp(d)));
  else
    steps.skip(
      "dhcp-configure",
      site.configureDhcp
        ? "turned off by the job's configureDhcp: false"
        : `DHCP is managed outside Fleet Manager at ${site.slug}`,
    );
  await steps.run("ironic-provide", (tick) => eachDevice(enrolled, tick, (d) => waiting.ironicProvide(d)));
  const platformClass = site.platformClassActivityReady ? (str(input.params.platformClass) ?? null) : null;
  const tags = Array.isArray(input.params.tags)
    ? input.params.tags.filter((t): t is string => typeof t === "string")
    : [];
  await steps.run("netbox-activate", (tick) =>
    eachDevice(enrolled, tick, (d) => quick.netboxActivate(d, { platformClass, tags })),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, enrolled));
  return steps.snapshot();
}

export async function unenrolWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.UNENROL);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run("netbox-stage", (tick) => eachDevice(plan.devices, tick, (d) => quick.netboxStage(d)));
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}

/**
 * Submits one SLURM batch job per device, pinned to its node, and waits for all of them. A
 * cancelled burn-in cancels its SLURM jobs before the workflow ends CANCELLED.
 */
export async function burnInWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.BURN_IN);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  if (!plan.site.slurmEnabled) {
    await steps.run("slurm-submit", () =>
      Promise.reject(
        ApplicationFailure.nonRetryable(
          `SLURM is not enabled at ${plan.site.slug}: burn-in runs through SLURM`,
          "NotConfigured",
        ),
      ),
    );
  }
  const durationMinutes = typeof input.params.durationMinutes === "number" ? input.params.durationMinutes : 60;
  const partition = str(input.params.partition);
  const submitted: number[] = [];
  // Every SLURM job submitted is either waited for or cancelled: the submits are not cut short
  // by a cancellation (a submit in flight would still create its job), and a failure of the
  // step or of the wait cancels what was submitted.
  const cleanUp = () => CancellationScope.nonCancellable(() => quick.slurmCancel([...submitted]));
  let ids: number[];
  try {
    ids = await CancellationScope.nonCancellable(() =>
      steps.run(
        "slurm-submit",
        (tick) =>
          eachDevice(plan.devices, tick, async (d) => {
            const id = await quick.slurmSubmitBurnIn({
              jobId: input.jobId,
              jobName: input.jobName,
              device: d,
              durationMinutes,
              ...(partition ? { partition } : {}),
            });
            submitted.push(id);
            return id;
          }),
        (ids) => `SLURM job(s) ${ids.join(", ")}`.slice(0, MESSAGE_MAX),
      ),
    );
  } catch (err) {
    if (submitted.length) await cleanUp();
    throw err;
  }
  let results: Awaited<ReturnType<Activities["slurmWait"]>>[];
  try {
    results = await steps.run(
      "slurm-run",
      (tick) =>
        eachDevice(plan.devices, tick, (d) =>
          waiting.slurmWait({ slurmJobId: ids[plan.devices.indexOf(d)]!, device: d.name }),
        ),
      (rs) =>
        rs
          .map((r) => `${r.device}: SLURM job ${r.slurmJobId} ${r.state} exit ${r.exitCode ?? "?"}`)
          .join("; ")
          .slice(0, MESSAGE_MAX),
    );
  } catch (err) {
    await cleanUp();
    throw err;
  }
  const failed = results.filter((r) => r.state !== "COMPLETED" || r.exitCode !== 0);
  if (failed.length) {
    const message = `burn-in failed on ${failed.map((r) => `${r.device} (SLURM job ${r.slurmJobId} ${r.state}, exit code ${r.exitCode ?? "unknown"})`).join(", ")}`;
    const s = steps.steps.find((x) => x.name === "slurm-run")!;
    Object.assign(s, { status: "FAILED" });
    throw ApplicationFailure.create({
      message: `slurm-run: ${message}`.slice(0, MESSAGE_MAX),
      type: STEP_FAILED,
      nonRetryable: true,
      details: [{ step: "slurm-run", steps: steps.snapshot().steps } satisfies StepFailureDetails],
    });
  }
  return steps.snapshot();
}

/**
 * Hands nodes back. The SLURM step runs only where the site's SLURM integration is on;
 * otherwise the workflow only checks that each Ironic node exists, then continues.
 */
export async function releaseWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.RELEASE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  if (plan.site.slurmEnabled)
    await steps.run("slurm-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.slurmCheckNode(d)));
  else steps.skip("slurm-check", `the SLURM integration is off at ${plan.site.slug}`);
  await steps.run("ironic-check", (tick) => eachDevice(plan.devices, tick, (d) => quick.ironicCheck(d)));
  await steps.run("hand-back", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}

/** Drives each node through Ironic `deleted` (cleaning wipes it) and waits for `available`. */
export async function teardownWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.TEARDOWN);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  await steps.run("ironic-teardown", (tick) => eachDevice(plan.devices, tick, (d) => waiting.ironicTeardown(d)));
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}

/** Rebuilds each node's instance with the given image (Ironic `rebuild`) and waits for `active`. */
export async function reimageWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.REIMAGE);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const image = str(input.params.image) ?? "";
  const { workflowId } = workflowInfo();
  await steps.run("ironic-rebuild", (tick) =>
    eachDevice(plan.devices, tick, (d) => waiting.ironicRebuild(d, { image, marker: workflowId })),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, plan.devices));
  return steps.snapshot();
}
