/** The activities as the workflows call them: timeouts, heartbeats and the retry policy. */
import { proxyActivities } from "@temporalio/workflow";
import { NON_RETRYABLE_FAILURES } from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";

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
export const quick = proxyActivities<Activities>({ startToCloseTimeout: "10m", heartbeatTimeout: "10s", retry });
/** Waiting on Ironic or SLURM: as long as the work takes. */
export const waiting = proxyActivities<Activities>({ startToCloseTimeout: "8h", heartbeatTimeout: "10s", retry });
