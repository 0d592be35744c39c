/**
 * Typed client for SLURM's REST API (slurmrestd), as the satellite agents use it: check the
 * controller, list nodes, submit a batch job, follow it, find it by name, cancel it.
 *
 * Wire format, as verified against slurmrestd 22.05.8 (openapi/v0.0.38) and its own schema at
 * GET /openapi/v3:
 * - Every request carries X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (a JWT). Without them
 *   slurmrestd answers 401 "Authentication failure" (text, not JSON).
 * - Answers are JSON with an `errors` array: {error, error_number | error_code | errno,
 *   description?, source?}. Failures are mostly HTTP 500, including "no such job" (error_number
 *   2017) and a token slurmctld rejects: 22.05 then says only "Unspecified error" (-1) or, for
 *   writes, "Zero Bytes were transmitted or received" (5005), exactly what it says when
 *   slurmctld does not answer.
 * - v0.0.38 submit: {script, job: {name, environment: {K: V} (required), nodelist: "a,b",
 *   current_working_directory, ...}}. `nodelist` is not in the published schema but is
 *   accepted (sbatch -w); `required_nodes` is refused there. v0.0.39+ take environment as
 *   ["K=V"] and required_nodes as a list; v0.0.40+ take time_limit as {set, number}.
 * - Job: job_state is a string in v0.0.38 ("COMPLETED"; a job whose processes are still being
 *   cleaned up reads "COMPLETING") and a list in v0.0.40+ (["FAILED", "COMPLETING"]); exit_code
 *   is the raw wait status in v0.0.38 (exit 3 -> 768, SIGTERM -> 15) and
 *   {status, return_code, signal} in v0.0.40+; times are epoch seconds or {set, number}.
 * - DELETE /job/{id} answers 200 for a running job and also for one already finished; 500
 *   (2017) for an id slurmctld does not know (finished jobs are forgotten after MinJobAge).
 *
 * Reads and the cancel are retried with exponential backoff and full jitter on connection
 * errors, timeouts, 429, 502-504, and 500s that can be transient (no Slurm error number, or
 * -1, or a communication error): a rejected token in 22.05 is among those and costs the
 * retries before it surfaces. A submit is not idempotent and is sent once; it is only retried
 * when the connection was refused (nothing was sent). Failures surface as SlurmApiError
 * (slurmrestd answered with an error) and SlurmUnavailableError (it did not answer).
 * Tokens are never put into errors or messages.
 */
import { z } from "zod";
import { SourceUnavailableError, describeFetchError, describeParseError, sendWithRetries } from "../http/http.ts";

/** One entry of slurmrestd's `errors` array, whatever the version calls the fields. */
export interface SlurmErrorEntry {
  error: string | null;
  /** Slurm's error number (error_number / error_code / errno), e.g. 2017 invalid job id. */
  errorNumber: number | null;
  description: string | null;
  source: string | null;
}

/** Slurm error numbers (slurm_errno.h) this client acts on. */
export const SLURM_ERRNO = {
  UNSPECIFIED: -1,
  INVALID_JOB_ID: 2017,
  ZERO_BYTES_TRANSMITTED: 5005,
} as const;

export class SlurmApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: SlurmErrorEntry[],
    message: string,
  ) {
    super(message);
    this.name = "SlurmApiError";
  }

  get errorNumbers(): number[] {
    return this.errors.flatMap((e) => (e.errorNumber === null ? [] : [e.errorNumber]));
  }
}

/** No answer from slurmrestd (connection refused or reset, DNS, timeout) after every attempt. */
export class SlurmUnavailableError extends SourceUnavailableError {}

/** Base job states (job_state), plus the transient ones 22.05 reports instead of the base. */
export type SlurmJobState =
  | "PENDING"
  | "RUNNING"
  | "SUSPENDED"
  | "COMPLETING"
  | "CONFIGURING"
  | "REQUEUED"
  | "COMPLETED"
  | "FAILED"
  | "CANCELLED"
  | "TIMEOUT"
  | "NODE_FAIL"
  | "PREEMPTED"
  | "BOOT_FAIL"
  | "DEADLINE"
  | "OUT_OF_MEMORY"
  | (string & {});

const TERMINAL_STATES: ReadonlySet<string> = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
  "OUT_OF_MEMORY",
  "REVOKED",
  "SPECIAL_EXIT",
]);

/** Whether a job in this state has ended for good (its exit code is known). */
export function isTerminalSlurmState(state: string): boolean {
  return TERMINAL_STATES.has(state.toUpperCase());
}

export interface SlurmNode {
  name: string;
  /** Base state, lower case: idle, allocated, mixed, down, future, unknown. */
  state: string;
  /** Upper case, e.g. ["DRAIN"] for a draining node. */
  stateFlags: string[];
  /** Why the node is drained or down; null when none. */
  reason: string | null;
  partitions: string[];
}

export interface SlurmJob {
  jobId: number;
  name: string;
  state: SlurmJobState;
  /** Further state flags (v0.0.40+ lists them beside the base state; v0.0.38 has none). */
  stateFlags: string[];
  /** e.g. "None", "Resources", "NonZeroExitCode"; null when empty. */
  stateReason: string | null;
  /** The script's exit status once the job has ended normally; null while it runs or when it was killed by a signal. */
  exitCode: number | null;
  /** The signal that ended the job (e.g. 15 for a cancelled one); null otherwise. */
  signal: number | null;
  /** Allocated nodes, expanded ("gpu[001-002]" -> ["gpu001", "gpu002"]); empty while pending. */
  nodes: string[];
  partition: string | null;
  submitTime: Date | null;
  /** When it started; null while pending. */
  startTime: Date | null;
  /** When it ended; null until it has. */
  endTime: Date | null;
  comment: string | null;
}

export interface SlurmJobSpec {
  /** Job name; unique names let a caller find a job it may already have submitted (jobsByName). */
  name: string;
  /** The batch script, starting with #!. */
  script: string;
  /** Run on exactly these nodes. */
  nodes?: string[];
  partition?: string;
  timeLimitMinutes?: number;
  /** Default /tmp (slurmrestd would otherwise use its own working directory). */
  workingDirectory?: string;
  /** Added to PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin (a job needs an environment). */
  environment?: Record<string, string>;
  comment?: string;
  /** Defaults to <workingDirectory>/slurm-<jobid>.out, as sbatch. */
  standardOutput?: string;
  standardError?: string;
}

export interface SlurmPing {
  controllers: { hostname: string; up: boolean; mode: string | null }[];
  /** e.g. "22.05.8" */
  slurmVersion: string | null;
}

export type SlurmCancelOutcome =
  /** The job was pending or running and has been told to stop (it ends CANCELLED shortly). */
  | "cancelled"
  /** It had already ended; nothing was sent. */
  | "already-finished"
  /** slurmctld does not know the id (never existed, or finished longer ago than MinJobAge). */
  | "not-found";

export interface SlurmCancelResult {
  outcome: SlurmCancelOutcome;
  /** The state the job was in when asked (null when not found). */
  state: string | null;
}

export interface SlurmClientOptions {
  /** slurmrestd's base URL, e.g. http://slurm.example:6820 */
  baseUrl: string;
  /** OpenAPI plugin version in the paths; 22.05 serves v0.0.36 to v0.0.38. */
  apiVersion?: string;
  /** Sent as X-SLURM-USER-NAME; the token must be valid for this user (a root token may act as any user). */
  user: string;
  /** Returns the JWT sent as X-SLURM-USER-TOKEN; called for every attempt, so it may rotate. */
  token: () => string | Promise<string>;
  /** Per attempt, including reading the body. slurmrestd waits ~10 s for a silent slurmctld. */
  timeoutMs?: number;
  /** Attempts for retryable requests, including the first. */
  maxAttempts?: number;
  /** First backoff delay, milliseconds; doubles each attempt, with full jitter. */
  backoffMs?: number;
  fetch?: typeof fetch;
}

interface RequestOptions {
  body?: unknown;
  /** Safe to send again after a failure that may or may not have reached slurmrestd. */
  idempotent: boolean;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const ErrorsSchema = z.array(z.unknown()).optional();
const NodesResponseSchema = z.looseObject({ nodes: z.array(z.unknown()), errors: ErrorsSchema });
const JobsResponseSchema = z.looseObject({ jobs: z.array(z.unknown()), errors: ErrorsSchema });
const SubmitResponseSchema = z.looseObject({ job_id: z.number().int(), errors: ErrorsSchema });
const PingResponseSchema = z.looseObject({ pings: z.array(z.unknown()), meta: z.unknown().optional() });

const RawNodeSchema = z.looseObject({
  name: z.string(),
  state: z.union([z.string(), z.array(z.string())]),
  state_flags: z.array(z.string()).optional(),
  reason: z.string().nullable().optional(),
  partitions: z.array(z.string()).nullable().optional(),
});

const RawJobSchema = z.looseObject({
  job_id: z.number().int(),
  name: z.string().nullable().optional(),
  job_state: z.union([z.string(), z.array(z.string())]),
  state_reason: z.string().nullable().optional(),
  exit_code: z.unknown().optional(),
  nodes: z.string().nullable().optional(),
  partition: z.string().nullable().optional(),
  submit_time: z.unknown().optional(),
  start_time: z.unknown().optional(),
  end_time: z.unknown().optional(),
  comment: z.string().nullable().optional(),
});

export class SlurmClient {
  readonly baseUrl: string;
  readonly apiVersion: string;
  private readonly opts: Required<SlurmClientOptions>;

  constructor(opts: SlurmClientOptions) {
    const baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.baseUrl = baseUrl;
    this.apiVersion = opts.apiVersion ?? "v0.0.38";
    if (!/^v\d+\.\d+\.\d+$/.test(this.apiVersion))
      throw new Error(`apiVersion must look like v0.0.38, got "${this.apiVersion}"`);
    this.opts = {
      ...opts,
      baseUrl,
      apiVersion: this.apiVersion,
      timeoutMs: opts.timeoutMs ?? 30_000,
      maxAttempts: opts.maxAttempts ?? 3,
      backoffMs: opts.backoffMs ?? 200,
      fetch: opts.fetch ?? globalThis.fetch,
    };
  }

  /** The controllers as slurmrestd reaches them; also proves that the credentials are accepted. */
  async ping(): Promise<SlurmPing> {
    const body = await this.parsed("GET", "/ping", PingResponseSchema, { idempotent: true });
    const controllers = body.pings.map((raw) => {
      const p = (raw ?? {}) as { hostname?: unknown; ping?: unknown; pinged?: unknown; mode?: unknown };
      const answer = p.ping ?? p.pinged; // v0.0.38: ping, v0.0.40+: pinged
      return {
        hostname: String(p.hostname ?? ""),
        up: answer === "UP",
        mode: typeof p.mode === "string" ? p.mode : null,
      };
    });
    const meta = body.meta as { Slurm?: { release?: unknown }; slurm?: { release?: unknown } } | undefined;
    const release = meta?.Slurm?.release ?? meta?.slurm?.release;
    return { controllers, slurmVersion: typeof release === "string" ? release : null };
  }

  async nodes(): Promise<SlurmNode[]> {
    const path = "/nodes";
    const body = await this.parsed("GET", path, NodesResponseSchema, { idempotent: true });
    return body.nodes.map((raw) => {
      const n = this.parseItem(RawNodeSchema, raw, "GET", path, "node");
      const states = Array.isArray(n.state) ? n.state : [n.state];
      const flags = [...states.slice(1), ...(n.state_flags ?? [])].map((f) => f.toUpperCase());
      return {
        name: n.name,
        state: (states[0] ?? "unknown").toLowerCase(),
        stateFlags: [...new Set(flags)],
        reason: n.reason || null,
        partitions: n.partitions ?? [],
      };
    });
  }

  /**
   * Submits a batch job. Not retried once sent: if this throws SlurmUnavailableError after the
   * request went out (a timeout), the job may exist; look it up with jobsByName(spec.name).
   */
  async submitJob(spec: SlurmJobSpec): Promise<{ jobId: number }> {
    const body = await this.parsed("POST", "/job/submit", SubmitResponseSchema, {
      body: this.submitBody(spec),
      idempotent: false,
    });
    return { jobId: body.job_id };
  }

  /** One job, or null when slurmctld does not know the id. */
  async job(jobId: number): Promise<SlurmJob | null> {
    const path = `/job/${encodeURIComponent(String(jobId))}`;
    let body: z.infer<typeof JobsResponseSchema>;
    try {
      body = await this.parsed("GET", path, JobsResponseSchema, { idempotent: true });
    } catch (err) {
      if (isUnknownJob(err)) return null;
      throw err;
    }
    const raw = body.jobs
      .map((j) => this.parseItem(RawJobSchema, j, "GET", path, "job"))
      .find((j) => j.job_id === jobId);
    return raw ? normaliseJob(raw) : null;
  }

  /** Every job slurmctld still knows with exactly this name, oldest first. */
  async jobsByName(name: string): Promise<SlurmJob[]> {
    const path = "/jobs";
    const body = await this.parsed("GET", path, JobsResponseSchema, { idempotent: true });
    return body.jobs
      .map((j) => this.parseItem(RawJobSchema, j, "GET", path, "job"))
      .filter((j) => j.name === name)
      .map(normaliseJob)
      .sort((a, b) => a.jobId - b.jobId);
  }

  /**
   * Cancels a pending or running job (SIGKILL to every step, as `scancel --full`). Never throws
   * for a job that has already ended or that slurmctld does not know; says which it was. The
   * state is read first because slurmrestd answers 200 alike for a running and a finished job.
   */
  async cancelJob(jobId: number): Promise<SlurmCancelResult> {
    const before = await this.job(jobId);
    if (!before) return { outcome: "not-found", state: null };
    if (isTerminalSlurmState(before.state)) return { outcome: "already-finished", state: before.state };
    try {
      await this.request("DELETE", `/job/${encodeURIComponent(String(jobId))}`, { idempotent: true });
    } catch (err) {
      if (isUnknownJob(err)) return { outcome: "not-found", state: before.state }; // purged meanwhile
      throw err;
    }
    return { outcome: "cancelled", state: before.state };
  }

  private submitBody(spec: SlurmJobSpec): unknown {
    const modern = compareVersions(this.apiVersion, "v0.0.39") >= 0;
    const timeAsObject = compareVersions(this.apiVersion, "v0.0.40") >= 0;
    const env: Record<string, string> = { PATH: DEFAULT_PATH, ...spec.environment };
    const job: Record<string, unknown> = {
      name: spec.name,
      current_working_directory: spec.workingDirectory ?? "/tmp",
      environment: modern ? Object.entries(env).map(([k, v]) => `${k}=${v}`) : env,
    };
    if (spec.nodes?.length) {
      if (modern) job.required_nodes = spec.nodes;
      else job.nodelist = spec.nodes.join(",");
    }
    if (spec.partition !== undefined) job.partition = spec.partition;
    if (spec.timeLimitMinutes !== undefined)
      job.time_limit = timeAsObject
        ? { set: true, infinite: false, number: spec.timeLimitMinutes }
        : spec.timeLimitMinutes;
    if (spec.comment !== undefined) job.comment = spec.comment;
    if (spec.standardOutput !== undefined) job.standard_output = spec.standardOutput;
    if (spec.standardError !== undefined) job.standard_error = spec.standardError;
    return { script: spec.script, job };
  }

  private parseItem<S extends z.ZodType>(
    schema: S,
    raw: unknown,
    method: string,
    path: string,
    what: string,
  ): z.infer<S> {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    throw new SlurmApiError(
      200,
      [],
      `${method} ${this.fullPath(path)}: unexpected ${what}: ${describeParseError(parsed.error)}`,
    );
  }

  private async parsed<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    o: RequestOptions,
  ): Promise<z.infer<S>> {
    const { status, json } = await this.request(method, path, o);
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    // A 2xx without the data, but with errors, is a failure slurmrestd did not map to a status.
    const errors = parseErrors(json);
    const detail = errors.length ? errorSummary(errors) : describeParseError(parsed.error);
    throw new SlurmApiError(
      status,
      errors,
      `${method} ${this.fullPath(path)} -> ${status} with an unexpected body: ${detail}`,
    );
  }

  private fullPath(path: string): string {
    return `/slurm/${this.apiVersion}${path}`;
  }

  async request(method: string, path: string, o: RequestOptions): Promise<{ status: number; json: unknown }> {
    const fullPath = this.fullPath(path);
    let json: unknown;
    const { res } = await sendWithRetries({
      url: this.baseUrl + fullPath,
      method,
      body: o.body,
      fetch: this.opts.fetch,
      timeoutMs: this.opts.timeoutMs,
      attempts: Math.max(1, this.opts.maxAttempts),
      backoffMs: this.opts.backoffMs,
      headers: async () => ({
        accept: "application/json",
        "x-slurm-user-name": this.opts.user,
        "x-slurm-user-token": await this.opts.token(),
      }),
      judge: (res, text) => {
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        if (res.ok) return { kind: "ok" };
        const errors = parseErrors(json);
        const error = new SlurmApiError(
          res.status,
          errors,
          `${method} ${fullPath} -> ${res.status} ${describeFailure(res, text, errors)}`,
        );
        return o.idempotent && retryable(res.status, errors) ? { kind: "retry", error } : { kind: "fail", error };
      },
      // A refused connection carried nothing, so even a submit may be sent again.
      resendable: (error) => o.idempotent || connectionRefused(error),
      unavailable: (cause, n) => {
        const maybeSent = !o.idempotent && !connectionRefused(cause) ? "; the request may have reached slurmrestd" : "";
        return new SlurmUnavailableError(
          `${method} ${fullPath}: slurmrestd at ${this.baseUrl} did not answer after ${n} attempt(s): ${describeFetchError(cause)}${maybeSent}`,
          n,
          { cause },
        );
      },
    });
    return { status: res.status, json };
  }
}

function isUnknownJob(err: unknown): boolean {
  return err instanceof SlurmApiError && (err.status === 404 || err.errorNumbers.includes(SLURM_ERRNO.INVALID_JOB_ID));
}

function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === "ECONNREFUSED";
}

/**
 * 5xx that may pass: no Slurm error number, -1 (unspecified: also a silent slurmctld), or a
 * communication/socket error (1000-1999, 5000-5999). Others (e.g. 2017 no such job) are answers.
 */
function retryable(status: number, errors: SlurmErrorEntry[]): boolean {
  if (status === 429 || status === 502 || status === 503 || status === 504) return true;
  if (status !== 500) return false;
  return errors.every(
    (e) =>
      e.errorNumber === null ||
      e.errorNumber === SLURM_ERRNO.UNSPECIFIED ||
      (e.errorNumber >= 1000 && e.errorNumber < 2000) ||
      (e.errorNumber >= 5000 && e.errorNumber < 6000),
  );
}

function parseErrors(json: unknown): SlurmErrorEntry[] {
  const list = (json as { errors?: unknown } | null | undefined)?.errors;
  if (!Array.isArray(list)) return [];
  return list.map((raw) => {
    const e = (raw ?? {}) as Record<string, unknown>;
    const num = e.error_number ?? e.error_code ?? e.errno;
    const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
    return {
      error: str(e.error),
      errorNumber: typeof num === "number" ? num : null,
      description: str(e.description),
      source: str(e.source),
    };
  });
}

function errorSummary(errors: SlurmErrorEntry[]): string {
  return errors
    .map((e) => {
      const text =
        e.description && e.error && !e.description.includes(e.error)
          ? `${e.description}: ${e.error}`
          : (e.description ?? e.error ?? "error");
      return e.errorNumber !== null ? `${text} (${e.errorNumber})` : text;
    })
    .join("; ");
}

function describeFailure(res: Response, text: string, errors: SlurmErrorEntry[]): string {
  if (res.status === 401)
    return `${text.trim().slice(0, 200) || res.statusText}: slurmrestd needs both X-SLURM-USER-NAME and X-SLURM-USER-TOKEN`;
  const summary = errors.length ? errorSummary(errors) : text.trim().slice(0, 300) || res.statusText;
  const opaque =
    res.status === 500 &&
    errors.length > 0 &&
    errors.every(
      (e) => e.errorNumber === SLURM_ERRNO.UNSPECIFIED || e.errorNumber === SLURM_ERRNO.ZERO_BYTES_TRANSMITTED,
    );
  // slurmrestd 22.05 says no more than this when slurmctld rejects the JWT.
  return opaque
    ? `${summary} (slurmctld rejected the request: the token may be invalid, expired or for another user, or slurmctld is not answering)`
    : summary;
}

/** "v0.0.40" vs "v0.0.39": -1, 0, 1. */
function compareVersions(a: string, b: string): number {
  const pa = a.slice(1).split(".").map(Number);
  const pb = b.slice(1).split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** A number from v0.0.38's plain integer or v0.0.40+'s {set, infinite, number}; null when unset. */
function noVal(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (v && typeof v === "object") {
    const o = v as { set?: unknown; infinite?: unknown; number?: unknown };
    if (o.set === false || o.infinite === true || typeof o.number !== "number") return null;
    return o.number;
  }
  return null;
}

const epoch = (v: unknown): Date | null => {
  const s = noVal(v);
  return s !== null && s > 0 ? new Date(s * 1000) : null;
};

/** {exitCode, signal} from v0.0.38's raw wait status or v0.0.40+'s {status, return_code, signal}. */
function exitStatus(raw: unknown): { exitCode: number | null; signal: number | null } {
  if (typeof raw === "number") {
    const signal = raw & 0x7f;
    return signal ? { exitCode: null, signal } : { exitCode: (raw >> 8) & 0xff, signal: null };
  }
  if (raw && typeof raw === "object") {
    const o = raw as { status?: unknown; return_code?: unknown; signal?: { id?: unknown } };
    const status = Array.isArray(o.status) ? o.status : [o.status];
    const signal = noVal(o.signal?.id);
    if (status.includes("SIGNALED") || (signal !== null && signal > 0)) return { exitCode: null, signal };
    return { exitCode: noVal(o.return_code), signal: null };
  }
  return { exitCode: null, signal: null };
}

function normaliseJob(j: z.infer<typeof RawJobSchema>): SlurmJob {
  const states = (Array.isArray(j.job_state) ? j.job_state : [j.job_state]).map((s) => s.toUpperCase());
  const state = states[0] ?? "UNKNOWN";
  const ended = isTerminalSlurmState(state);
  const { exitCode, signal } = ended ? exitStatus(j.exit_code) : { exitCode: null, signal: null };
  return {
    jobId: j.job_id,
    name: j.name ?? "",
    state,
    stateFlags: states.slice(1),
    stateReason: j.state_reason || null,
    exitCode,
    signal,
    nodes: j.nodes ? expandHostlist(j.nodes) : [],
    partition: j.partition || null,
    submitTime: epoch(j.submit_time),
    startTime: state === "PENDING" ? null : epoch(j.start_time),
    endTime: ended ? epoch(j.end_time) : null,
    comment: j.comment || null,
  };
}

/** Expands a Slurm hostlist: "gpu[001-003,007],login1" -> gpu001, gpu002, gpu003, gpu007, login1. */
export function expandHostlist(expr: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  const items: string[] = [];
  for (let i = 0; i <= expr.length; i++) {
    const c = expr[i];
    if (c === "[") depth++;
    else if (c === "]") depth--;
    else if ((c === "," && depth === 0) || i === expr.length) {
      const item = expr.slice(start, i).trim();
      if (item) items.push(item);
      start = i + 1;
    }
  }
  for (const item of items) out.push(...expandItem(item));
  return out;
}

function expandItem(item: string): string[] {
  const m = /^([^[]*)\[([^\]]*)\](.*)$/.exec(item);
  if (!m) return [item];
  const [, prefix, ranges, rest] = m as unknown as [string, string, string, string];
  const tails = expandItem(rest);
  const out: string[] = [];
  for (const range of ranges.split(",")) {
    const [lo, hi] = range.split("-");
    if (lo === undefined || !/^\d+$/.test(lo) || (hi !== undefined && !/^\d+$/.test(hi))) return [item]; // not a range we understand
    const width = lo.length;
    for (let n = Number(lo); n <= Number(hi ?? lo); n++) {
      for (const tail of tails) out.push(`${prefix}${String(n).padStart(width, "0")}${tail}`);
    }
  }
  return out;
}
