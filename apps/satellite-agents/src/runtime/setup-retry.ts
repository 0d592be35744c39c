/**
 * Setup steps (resolve the site, connect to Temporal, authenticate to Keystone) retry with the
 * same backoff and budget as loop cycles: a hub or source that is down at start is waited for,
 * then the process exits 1 like a loop that gave up. What retrying cannot fix fails at once.
 */
import type { Logger } from "pino";
import { HubApiError } from "@fm/clients";
import { backoffDelay, sleep } from "./backoff.ts";
import { ConfigError, type CommonConfig } from "./config.ts";
import { describeError } from "./log.ts";

/** A setup failure that retrying cannot fix (unknown site, missing credentials file). */
export class FatalSetupError extends Error {}

type RetryConfig = Pick<CommonConfig, "FM_MAX_CONSECUTIVE_FAILURES" | "FM_BACKOFF_BASE_MS" | "FM_BACKOFF_MAX_S">;

/** `fn`'s result, or undefined when the signal aborted while waiting. */
export async function withRetries<T>(
  config: RetryConfig,
  log: Logger,
  signal: AbortSignal,
  what: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  for (let failures = 0; ;) {
    if (signal.aborted) return undefined;
    try {
      return await fn();
    } catch (err) {
      failures++;
      if (permanent(err) || failures >= config.FM_MAX_CONSECUTIVE_FAILURES) throw err;
      const delay = backoffDelay(failures, config.FM_BACKOFF_BASE_MS, config.FM_BACKOFF_MAX_S * 1000);
      log.warn({ err: describeError(err), failures, retryInMs: delay }, `${what} failed; retrying`);
      await sleep(delay, signal);
    }
  }
}

function permanent(err: unknown): boolean {
  return (
    err instanceof FatalSetupError ||
    err instanceof ConfigError ||
    // The clients' one table (statusClass): a 409 is retried here as by the worker.
    (err instanceof HubApiError && err.statusClass === "final")
  );
}
