/**
 * A generic signed webhook: each batch is one POST of
 * `{"type": "fleet.inventory.records", "timestamp": ISO, "data": {"records": [...]}}` signed per
 * Standard Webhooks (./standard-webhooks.ts). The webhook-id is derived from the batch's record
 * ids, so a retry of the same batch carries the same id; receivers should still de-duplicate on
 * each record's `recordId`, since bisection and restarts regroup records.
 *
 * 2xx: delivered. 400, 413, 422: the content is refused (bisected to one record, dead-lettered).
 * 401/403: our secret is wrong, not the record: retried. 429 (Retry-After), 5xx, no answer: retried.
 */
import { createHash } from "node:crypto";
import type { InventoryRecord } from "@fm/domain";
import { secretKey, sign } from "./standard-webhooks.ts";
import { retryAfter, unreachable, type DeliveryOutcome, type Sink } from "./sink.ts";

export interface WebhookSinkOptions {
  url: string;
  secret: () => string;
  timeoutMs: number;
}

export class WebhookSink implements Sink {
  readonly name = "webhook";

  constructor(private readonly o: WebhookSinkOptions) {}

  async deliver(records: readonly InventoryRecord[], signal: AbortSignal): Promise<DeliveryOutcome> {
    const id = `msg_${createHash("sha256")
      .update(records.map((r) => r.recordId).join("\n"))
      .digest("base64url")
      .slice(0, 27)}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      type: "fleet.inventory.records",
      timestamp: new Date(timestamp * 1000).toISOString(),
      data: { records },
    });
    let signature: string;
    try {
      signature = sign(secretKey(this.o.secret()), id, timestamp, body);
    } catch (err) {
      // An unreadable or malformed secret is ours to fix, not the receiver being down.
      return { kind: "retry", errorClass: "sink_config", message: (err as Error).message };
    }
    let res: Response;
    try {
      res = await fetch(this.o.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        },
        body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]),
      });
    } catch (err) {
      return unreachable(err);
    }
    const text = (await res.text()).slice(0, 500);
    if (res.ok) return { kind: "ok" };
    const what = `${res.status}${text ? `: ${text}` : ""}`;
    if (res.status === 400 || res.status === 413 || res.status === 422) return { kind: "rejected", reason: what };
    if (res.status === 401 || res.status === 403) return { kind: "retry", errorClass: "sink_auth", message: what };
    if (res.status === 429)
      return {
        kind: "retry",
        errorClass: "sink_throttled",
        message: what,
        afterMs: retryAfter(res.headers.get("retry-after")),
      };
    return { kind: "retry", errorClass: "sink_unavailable", message: what };
  }
}
