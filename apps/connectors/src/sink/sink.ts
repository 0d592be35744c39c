/**
 * The one interface every destination implements: deliver a batch of records, and say what
 * became of it. The delivery loop (../deliverer.ts) owns retries, backoff, bisection and dead
 * letters; a sink only speaks its wire format and classifies the answer. A new destination is
 * a new file here, not a fork of the connector.
 */
import { retryAfterMs } from "@fm/clients";
import type { InventoryRecord } from "@fm/domain";

/**
 * Why a delivery did not succeed, the `reason` label of the failure count and what the operator
 * check prints (docs/connectors.md, "Error classes").
 */
export const ERROR_CLASSES = [
  "sink_unavailable",
  "sink_throttled",
  "sink_auth",
  "sink_config",
  "sink_rejected",
  "hub_unavailable",
  "hub_unauthorized",
  "feed_cursor_expired",
  "internal",
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export type DeliveryOutcome =
  | { kind: "ok" }
  /** Nothing was stored; try the same batch again later (after `afterMs` when the sink said so). */
  | { kind: "retry"; errorClass: Exclude<ErrorClass, "sink_rejected">; message: string; afterMs?: number }
  /** The sink refused the content for good: one record of the batch is malformed for it. */
  | { kind: "rejected"; reason: string };

export interface Sink {
  /** `kusto`, `webhook`: the `sink` label of the metrics. */
  readonly name: string;
  deliver(records: readonly InventoryRecord[], signal: AbortSignal): Promise<DeliveryOutcome>;
}

/** A request that got no answer (refused, reset, timed out) is the sink being unavailable. */
export function unreachable(err: unknown): DeliveryOutcome {
  const cause = (err as { cause?: { code?: string } })?.cause?.code;
  const name = (err as { name?: string })?.name;
  return {
    kind: "retry",
    errorClass: "sink_unavailable",
    message: name === "TimeoutError" ? "timed out" : (cause ?? (err instanceof Error ? err.message : String(err))),
  };
}

/**
 * Retry-After in ms, either of its RFC 9110 §10.2.3 forms (delay-seconds or an HTTP-date), read
 * by the clients' one parser; capped (2 minutes here, longer than the clients' own loops wait)
 * so one answer cannot park the queue for long. Undefined when absent or unreadable.
 */
export function retryAfter(header: string | null, capMs = 120_000, now = Date.now()): number | undefined {
  return retryAfterMs(header, capMs, now);
}
