/**
 * Typed client for SLURM's REST API (slurmrestd), as the satellite agents use it: check the
 * controller, list nodes, submit a batch job, follow it, find it by name, cancel it. Every
 * request carries X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (a JWT). The API versions' shapes
 * are read in versions.ts, failures classified in errors.ts.
 *
 * DELETE /job/{id} answers 200 for a running job and also for one already finished; 500 (2017)
 * for an id slurmctld does not know (finished jobs are forgotten after MinJobAge).
 *
 * Reads and the cancel are retried with exponential backoff and equal jitter on connection
 * errors, timeouts, 429, 502-504, and 500s that can be transient (no Slurm error number, or
 * -1, or a communication error): a rejected token in 22.05 is among those and costs the
 * retries before it surfaces. A submit is not idempotent and is sent once; it is only retried
 * when the connection was refused (nothing was sent). Failures surface as SlurmApiError
 * (slurmrestd answered with an error) and SlurmUnavailableError (it did not answer).
 */
import { z } from "zod";
import { describeParseError, noAnswer, sendWithRetries } from "../http/http.ts";
import {
  SlurmApiError,
  SlurmUnavailableError,
  connectionRefused,
  describeFailure,
  errorSummary,
  isUnknownJob,
  parseErrors,
  retryable,
} from "./errors.ts";
import {
  isTerminalSlurmState,
  type SlurmCancelResult,
  type SlurmJob,
  type SlurmJobSpec,
  type SlurmNode,
  type SlurmPing,
} from "./types.ts";
import {
  RawJobSchema,
  RawNodeSchema,
  canUpdateNode,
  normaliseJob,
  normaliseNode,
  normalisePing,
  submitBody,
  updateNodeBody,
  type SlurmNodeUpdate,
} from "./versions.ts";

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
  /** First backoff delay, milliseconds; doubles each attempt, with equal jitter (backoffDelay). */
  backoffMs?: number;
  fetch?: typeof fetch;
}

interface RequestOptions {
  body?: unknown;
  /** Safe to send again after a failure that may or may not have reached slurmrestd. */
  idempotent: boolean;
}

const ErrorsSchema = z.array(z.unknown()).optional();
const NodesResponseSchema = z.looseObject({ nodes: z.array(z.unknown()), errors: ErrorsSchema });
const JobsResponseSchema = z.looseObject({ jobs: z.array(z.unknown()), errors: ErrorsSchema });
const SubmitResponseSchema = z.looseObject({ job_id: z.number().int(), errors: ErrorsSchema });
const PingResponseSchema = z.looseObject({ pings: z.array(z.unknown()), meta: z.unknown().optional() });

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
    return normalisePing(await this.parsed("GET", "/ping", PingResponseSchema, { idempotent: true }));
  }

  async nodes(): Promise<SlurmNode[]> {
    const path = "/nodes";
    const body = await this.parsed("GET", path, NodesResponseSchema, { idempotent: true });
    return body.nodes.map((raw) => normaliseNode(this.parseItem(RawNodeSchema, raw, "GET", path, "node")));
  }

  /**
   * Drains a node with a reason, or undrains it (`POST /node/{name}`, v0.0.40+; setting a state is
   * idempotent, so it is retried like a read). With an older API version it throws without
   * sending anything: 22.05's slurmrestd has no node update, use `scontrol update` there.
   */
  async updateNode(name: string, update: SlurmNodeUpdate): Promise<void> {
    if (!canUpdateNode(this.apiVersion))
      throw new Error(`slurmrestd ${this.apiVersion} cannot update nodes (v0.0.40 and later can)`);
    const { json } = await this.request("POST", `/node/${encodeURIComponent(name)}`, {
      body: updateNodeBody(update),
      idempotent: true,
    });
    // A 200 may still carry errors (slurmrestd's openapi_resp {errors, warnings, meta}).
    const errors = parseErrors(json);
    if (errors.length)
      throw new SlurmApiError(200, errors, `POST ${this.fullPath(`/node/${name}`)}: ${errorSummary(errors)}`);
  }

  /**
   * Submits a batch job. Not retried once sent: if this throws SlurmUnavailableError after the
   * request went out (a timeout), the job may exist; look it up with jobsByName(spec.name).
   */
  async submitJob(spec: SlurmJobSpec): Promise<{ jobId: number }> {
    const body = await this.parsed("POST", "/job/submit", SubmitResponseSchema, {
      body: submitBody(this.apiVersion, spec),
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
          noAnswer(`${method} ${fullPath}`, `slurmrestd at ${this.baseUrl}`, n, cause) + maybeSent,
          n,
          { cause },
        );
      },
    });
    return { status: res.status, json };
  }
}
