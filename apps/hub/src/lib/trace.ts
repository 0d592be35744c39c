/**
 * The trace of a request (W3C Trace Context, https://www.w3.org/TR/trace-context/#traceparent-header):
 * a caller's well-formed `traceparent` is honoured, so the hub's lines join the caller's trace;
 * otherwise the hub starts one. The trace id is in every log line of the request (`trace_id`)
 * and in its problem+json (`traceId`).
 */
import { randomBytes } from "node:crypto";

// version "-" trace-id "-" parent-id "-" flags; a later version may append fields after a "-".
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The trace id of a `traceparent` header value, or undefined when it is not one to honour. */
export function traceIdOfTraceparent(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, , rest] = m;
  // Version ff is forbidden; version 00 has exactly four fields; all-zero ids are invalid.
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  return traceId;
}

export function newTraceId(): string {
  return randomBytes(16).toString("hex");
}

const traces = new WeakMap<object, string>();

/** The trace id of a request (its raw IncomingMessage): the same on every call. */
export function traceIdOf(raw: { headers: Record<string, string | string[] | undefined> }): string {
  let id = traces.get(raw);
  if (!id) {
    id = traceIdOfTraceparent(raw.headers.traceparent) ?? newTraceId();
    traces.set(raw, id);
  }
  return id;
}
