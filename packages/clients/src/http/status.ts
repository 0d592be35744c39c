/**
 * What an HTTP status from a source means for whoever sent the request: the one table every
 * client's retry loop, the Temporal worker's failure classifier, the agents' setup retry and
 * loop reasons, and the connector's reader read, so "is this status final?" is decided here.
 *
 *  - ok: the answer (2xx).
 *  - retry: sending it again later can succeed. `outage` rows (429, 5xx) say the source cannot
 *    answer now: the client's own loop retries them at once, with backoff and Retry-After, and
 *    the reasons call them `*_unavailable`. Other retry rows (409) depend on the resource's
 *    state, which lasts longer than a client's few attempts: the caller retries on its own
 *    schedule (the next poll, cycle or Temporal attempt), re-reading first.
 *  - auth: the credentials were refused (401): a fresh token, then again; a rotation in
 *    progress is waited for, never final.
 *  - final: the request itself is refused (400, 403, 404, 422...): sending it again gets the same
 *    answer. 1xx and 3xx reach here only when unfollowed: final too.
 *
 * The 409 decision, made once (the worker retried a 409, the setup retry gave up on it):
 * 409 is `retry`, not an outage, for every source. What each source means by it:
 *  - Ironic: NodeLocked, the conductor holds the node for an operation in progress (power sync,
 *    a deploy step); python-ironicclient and openstacksdk both retry it. (A port's "MAC already
 *    exists" is a 409 too: createPort is sent once and its callers read the port instead.)
 *  - Nova: conflictingRequest, the server is locked or in a task_state that will end.
 *  - the hub: a repeat of an Idempotency-Key whose first request still runs (409 with
 *    Retry-After: the hub itself tells the client to retry), a stale status or an older push:
 *    the caller's next attempt re-reads the state and decides again.
 *  - NetBox: a delete blocked by dependent objects (ProtectedError), which the same workflow may
 *    still be removing; slurmrestd does not answer 409.
 * The attempts stay bounded by the caller (FM_MAX_CONSECUTIVE_FAILURES, the activity's retry
 * policy, the transition's 30 polls), so a conflict that does not clear still ends, as a
 * failure the operator sees, rather than as an instant refusal of what a moment later works.
 *
 * Per source, only what the source documents differently: Prometheus and slurmrestd answer 500
 * (and other 5xx but 502/503/504) for a query or request they cannot run, not an outage, so
 * their clients do not retry them at once (slurmrestd's errno refines its 500: slurm/errors.ts).
 */
export type StatusClass = "ok" | "retry" | "final" | "auth";

/** The sources whose clients read this table. */
export type SourceName = "hub" | "ironic" | "nova" | "netbox" | "slurm" | "prometheus" | "keystone" | "oauth";

export interface StatusRow {
  class: StatusClass;
  /** The source cannot answer now (429, 5xx): retried at once by the client's own loop. */
  outage: boolean;
}

const OK: StatusRow = { class: "ok", outage: false };
const FINAL: StatusRow = { class: "final", outage: false };
const AUTH: StatusRow = { class: "auth", outage: false };
const OUTAGE: StatusRow = { class: "retry", outage: true };
/** Retry later, on the caller's schedule, not in the client's loop. */
const LATER: StatusRow = { class: "retry", outage: false };

/** The rows that differ from their range's (2xx ok, 4xx final, 5xx outage, else final). */
const BY_STATUS: Readonly<Record<number, StatusRow>> = {
  401: AUTH,
  409: LATER,
  429: OUTAGE,
};

/** A query or request the source cannot run: answered with a 5xx, yet no outage. */
const GATEWAY_ONLY: Readonly<Record<number, StatusRow>> = {
  500: LATER,
  501: LATER,
  505: LATER,
  506: LATER,
  507: LATER,
  508: LATER,
  510: LATER,
  511: LATER,
};

const BY_SOURCE: Readonly<Partial<Record<SourceName, Readonly<Record<number, StatusRow>>>>> = {
  prometheus: GATEWAY_ONLY,
  slurm: GATEWAY_ONLY,
};

/** The table's row for `status` from `source` (the default column when no source is given). */
export function statusRow(status: number, source?: SourceName): StatusRow {
  const row = (source && BY_SOURCE[source]?.[status]) ?? BY_STATUS[status];
  if (row) return row;
  if (status >= 200 && status < 300) return OK;
  if (status >= 500 && status < 600) return OUTAGE;
  return FINAL;
}

/** ok / retry / final / auth: what `status` from `source` means for its sender. */
export function statusClass(status: number, source?: SourceName): StatusClass {
  return statusRow(status, source).class;
}

/** The source could not answer now (429, 5xx): retried by the client's own loop, an `*_unavailable` reason. */
export function isOutage(status: number, source?: SourceName): boolean {
  return statusRow(status, source).outage;
}
