/** Small pieces every HTTP client here shares: sleeping, and turning errors into words. */
import { z } from "zod";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A zod error as `path: message; …`, for messages that say which field of a response was wrong. */
export function describeParseError(err: unknown): string {
  if (err instanceof z.ZodError) return err.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
  return err instanceof Error ? err.message : String(err);
}

/** "fetch failed" says nothing; the useful part (ECONNREFUSED, timeout) is in the cause. */
export function describeFetchError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === "TimeoutError") return "timed out";
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause?.code ?? cause?.message ?? err.message;
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
