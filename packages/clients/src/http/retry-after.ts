/**
 * Retry-After (RFC 9110 §10.2.3) in milliseconds, in either of its forms: delay-seconds
 * ("120") or an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT", and the obsolete RFC 850 and
 * asctime forms, which all start with the day's name). A date already past is 0: retry now.
 * Undefined when absent, empty, negative or unreadable: the caller's own backoff then decides.
 *
 * Capped: a far-off Retry-After is better handled by the caller's next run than by sleeping.
 * The clients' own retry loops cap at 30 s (DEFAULT_RETRY_AFTER_CAP_MS); the connector's
 * delivery queue, which can afford to wait, passes its own cap.
 */
export const DEFAULT_RETRY_AFTER_CAP_MS = 30_000;

const DELAY_SECONDS = /^\d+(\.\d+)?$/;
const HTTP_DATE = /^[A-Za-z]{3}/;

export function retryAfterMs(
  header: string | null | undefined,
  capMs = DEFAULT_RETRY_AFTER_CAP_MS,
  now = Date.now(),
): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (DELAY_SECONDS.test(value)) return Math.min(Number(value) * 1000, capMs);
  if (!HTTP_DATE.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), capMs);
}
