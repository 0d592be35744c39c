/** Small pieces every HTTP client here shares: sleeping, and turning errors into words. */
import { z } from "zod";

import { backoffDelay } from "./backoff.ts";
import { isOutage, statusClass, type SourceName, type StatusClass } from "./status.ts";

export { retryAfterMs } from "./retry-after.ts";
export { isOutage, statusClass, statusRow, type SourceName, type StatusClass, type StatusRow } from "./status.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A zod error as `path: message; …`, for messages that say which field of a response was wrong. */
export function describeParseError(err: unknown): string {
  if (err instanceof z.ZodError)
    return err.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
  return err instanceof Error ? err.message : String(err);
}

/** "fetch failed" says nothing; the useful part (ECONNREFUSED, timeout) is in the cause. */
export function describeFetchError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === "TimeoutError") return "timed out";
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause?.code ?? cause?.message ?? err.message;
}

/** "<request>: <source> did not answer after <n> attempt(s): <why>", the message of every unavailable error. */
export function noAnswer(request: string, source: string, attempts: number, cause: unknown): string {
  return `${request}: ${source} did not answer after ${attempts} attempt(s): ${describeFetchError(cause)}`;
}

/** A response body: JSON (an empty body is undefined) that fits `schema`, or what does not fit, in words. */
export function parseBody<S extends z.ZodType>(
  schema: S,
  text: string,
): { ok: true; value: z.infer<S> } | { ok: false; problem: string } {
  try {
    return { ok: true, value: schema.parse(text ? JSON.parse(text) : undefined) };
  } catch (err) {
    return { ok: false, problem: describeParseError(err) };
  }
}

/**
 * A source answered, with an error: the base of every client's `*ApiError` (IronicApiError,
 * NetboxApiError, HubApiError, ...), so callers that only need the status and what it means
 * (the worker's failure classifier, the agents' reasons) catch them all as one.
 */
export class SourceApiError extends Error {
  constructor(
    readonly source: SourceName,
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }

  /** What the status means for the sender: ok / retry / final / auth (status.ts). */
  get statusClass(): StatusClass {
    return statusClass(this.status, this.source);
  }

  /** The source could not answer now (429, 5xx). */
  get outage(): boolean {
    return isOutage(this.status, this.source);
  }
}

/**
 * No answer from a source (connection refused or reset, DNS, timeout) after every attempt. Each
 * client has its own subclass (IronicUnavailableError, NetboxUnavailableError, ...) so callers
 * can tell sources apart, or catch them all as an outage to retry later.
 */
export class SourceUnavailableError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** What a client makes of one answer: keep it, give up with an error, or try again. */
export type Verdict<E extends Error> =
  | { kind: "ok" }
  | { kind: "fail"; error: E }
  /** Counted as a failed attempt; the next waits the backoff, or `afterMs` (Retry-After) if longer. */
  | { kind: "retry"; error: E; afterMs?: number | undefined }
  /** Send again at once, uncounted (e.g. with a fresh token after a 401). */
  | { kind: "again" };

export interface SendOptions<E extends Error> {
  url: URL | string;
  method: string;
  /** Sent as JSON (with its content-type) when defined. */
  body?: unknown;
  /** Sent as an application/x-www-form-urlencoded body instead (OAuth token requests). */
  form?: Record<string, string>;
  /** Cancels the attempt under way (with `timeoutMs`) and the attempts after it. */
  signal?: AbortSignal;
  redirect?: "follow" | "manual" | "error";
  /** Headers of each attempt. Called outside the retry: a failing token source is not an outage. */
  headers(): Promise<Record<string, string>> | Record<string, string>;
  fetch: typeof fetch;
  timeoutMs: number;
  attempts: number;
  backoffMs: number;
  judge(res: Response, text: string): Verdict<E>;
  /** May a request that failed to send (refused, reset, timed out) be sent again? Default: yes. */
  resendable?(error: unknown): boolean;
  /** The error when no attempt got an answer. */
  unavailable(cause: unknown, attempts: number): Error;
  /** How to wait between attempts; tests pass one that records the delays. */
  sleep?: (ms: number) => Promise<unknown>;
}

function contentType(o: Pick<SendOptions<Error>, "body" | "form">): Record<string, string> {
  if (o.form) return { "content-type": "application/x-www-form-urlencoded" };
  return o.body !== undefined ? { "content-type": "application/json" } : {};
}

/**
 * The retry loop every client shares (hub, Ironic, NetBox, slurmrestd): up to `attempts`
 * sends with exponential backoff (backoffDelay: equal jitter); transport failures and the answers `judge`
 * calls retryable are tried again; the last HTTP error, else an `unavailable` error, is thrown.
 */
export async function sendWithRetries<E extends Error>(o: SendOptions<E>): Promise<{ res: Response; text: string }> {
  let last: { error: unknown; http: boolean; afterMs?: number | undefined } | undefined;
  let attempt = 0;
  while (attempt < o.attempts) {
    attempt++;
    if (attempt > 1) await (o.sleep ?? sleep)(Math.max(backoffDelay(attempt - 1, o.backoffMs), last?.afterMs ?? 0));
    o.signal?.throwIfAborted();
    const headers = await o.headers();
    const timeout = AbortSignal.timeout(o.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await o.fetch(o.url, {
        method: o.method,
        headers: { ...headers, ...contentType(o) },
        body: o.form
          ? new URLSearchParams(o.form).toString()
          : o.body !== undefined
            ? JSON.stringify(o.body)
            : undefined,
        ...(o.redirect ? { redirect: o.redirect } : {}),
        signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout,
      });
      text = await res.text();
    } catch (error) {
      if (o.signal?.aborted) throw o.signal.reason;
      last = { error, http: false };
      if (o.resendable && !o.resendable(error)) break;
      continue;
    }
    const verdict = o.judge(res, text);
    if (verdict.kind === "ok") return { res, text };
    if (verdict.kind === "fail") throw verdict.error;
    if (verdict.kind === "again") {
      attempt--;
      continue;
    }
    last = { error: verdict.error, http: true, afterMs: verdict.afterMs };
  }
  if (last?.http) throw last.error;
  throw o.unavailable(last?.error, attempt);
}
