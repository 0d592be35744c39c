/**
 * How activities fail. Errors that retrying cannot fix are thrown as non-retryable
 * ApplicationFailures (types in NON_RETRYABLE_FAILURES); outages of a source are thrown as they
 * are, for Temporal to retry with backoff.
 */
import { ApplicationFailure, Context } from "@temporalio/activity";
import {
  NetboxAuthenticationError,
  NetboxMissingTagsError,
  NetboxPermissionError,
  NetboxUndefinedCustomFieldError,
  SourceApiError,
} from "@fm/clients";

/** Failures retrying cannot fix. */
export const badInput = (message: string) => ApplicationFailure.nonRetryable(message, "BadInput");
export const notConfigured = (message: string) => ApplicationFailure.nonRetryable(message, "NotConfigured");
export const sourceRejected = (message: string) => ApplicationFailure.nonRetryable(message, "SourceRejected");

/**
 * A source's refusal (a status the clients' table, statusClass, calls final: a 4xx other than
 * 401, 409 and 429) is final; an outage, a 5xx, a conflict (409) or a refused token is thrown as
 * is, for Temporal to retry with backoff.
 */
function classify(err: unknown): never {
  if (err instanceof NetboxMissingTagsError) throw badInput(err.message);
  if (err instanceof NetboxUndefinedCustomFieldError) throw notConfigured(err.message);
  // NetBox answers a bad or expired token with 403: a rotation in progress, retried.
  if (err instanceof NetboxAuthenticationError) throw err;
  if (err instanceof NetboxPermissionError) throw sourceRejected(err.message);
  // An unexpected body with a 200 is class ok there: not final, retried as before.
  if (err instanceof SourceApiError && err.statusClass === "final") throw sourceRejected(err.message);
  throw err;
}

/** Whether retrying cannot fix `err` (a source's final refusal): what guarded() would fail for good. */
export function isFinal(err: unknown): boolean {
  if (err instanceof ApplicationFailure) return err.nonRetryable === true;
  try {
    classify(err);
  } catch (classified) {
    return classified instanceof ApplicationFailure && classified.nonRetryable === true;
  }
  return false;
}

/**
 * Runs an activity body: classifies its errors, and, for an activity with a heartbeat timeout,
 * heartbeats every 2 s (a third of the timeout at most) while it runs. The heartbeat timeout is
 * there to notice a dead worker, not a slow source: without the ticker, a few slow Ironic calls
 * in a row would make Temporal start a second attempt beside a first one still running.
 */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const ticker = timeoutMs ? setInterval(() => ctx.heartbeat(), Math.min(2000, timeoutMs / 3)) : undefined;
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    return classify(err);
  } finally {
    clearInterval(ticker);
  }
}
