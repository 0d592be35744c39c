/**
 * Kusto streaming ingestion: `POST {cluster}/v1/rest/ingest/{database}/{table}
 * ?streamFormat=MultiJSON&mappingName={mapping}`, the records as JSON objects one per line,
 * `Authorization: Bearer` an Entra ID token for `{cluster}/.default`. The request is atomic:
 * 200 stores every record, an error stores none. Errors other than 401 carry Kusto's OneApiError
 * body `{"error": {code, message, "@type", "@message", "@context", "@permanent"}}`; a 401 carries
 * only its status (shapes cited in ../testing/SOURCES.md):
 *
 *  - 401: the token expired or was revoked: drop it, fetch another, send again once;
 *  - 429: throttled: wait Retry-After when sent (Microsoft does not promise one), else the backoff;
 *  - `@permanent: true` (400 BadRequest: a record the mapping cannot ingest): rejected, and the
 *    delivery loop bisects the batch to find the record;
 *  - 404, or a permanent error naming the mapping, database or table: the configuration is wrong,
 *    not a record: retried (class `sink_config`), so nothing is dead-lettered for it;
 *  - 5xx, 504, `@permanent: false`, no answer: again later.
 */
import { randomUUID } from "node:crypto";
import type { InventoryRecord } from "@fm/domain";
import type { EntraTokenSource } from "./entra-token.ts";
import { TokenError } from "./entra-token.ts";
import { retryAfter, unreachable, type DeliveryOutcome, type Sink } from "./sink.ts";

export interface KustoSinkOptions {
  clusterUrl: string;
  database: string;
  table: string;
  mappingName: string;
  tokens: EntraTokenSource;
  timeoutMs: number;
  /** x-ms-app: Kusto's telemetry names the caller by it. */
  app: string;
}

/** Error codes of a wrong database, table or mapping name: the configuration, whatever the records. */
const REQUEST_LEVEL = /Mapping(Reference)?(WasNot|Not)Found|EntityNotFound|DatabaseNotExist|TableNotFound/i;

interface OneApiError {
  error?: { code?: string; message?: string; "@message"?: string; "@permanent"?: boolean };
}

export class KustoSink implements Sink {
  readonly name = "kusto";
  private readonly url: string;

  constructor(private readonly o: KustoSinkOptions) {
    const path = `/v1/rest/ingest/${encodeURIComponent(o.database)}/${encodeURIComponent(o.table)}`;
    const query = new URLSearchParams({ streamFormat: "MultiJSON", mappingName: o.mappingName });
    this.url = `${o.clusterUrl}${path}?${query.toString()}`;
  }

  async deliver(records: readonly InventoryRecord[], signal: AbortSignal): Promise<DeliveryOutcome> {
    const body = records.map((r) => JSON.stringify(r)).join("\n");
    for (let attempt = 0; ; attempt++) {
      let token: string;
      try {
        token = await this.o.tokens.get();
      } catch (err) {
        if (err instanceof TokenError && err.status !== undefined && err.status < 500 && err.status !== 429)
          return { kind: "retry", errorClass: "sink_auth", message: err.message };
        return unreachable(err);
      }
      let res: Response;
      try {
        res = await fetch(this.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json; charset=utf-8",
            accept: "application/json",
            "x-ms-app": this.o.app,
            "x-ms-client-request-id": `${this.o.app};${randomUUID()}`,
          },
          body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]),
        });
      } catch (err) {
        return unreachable(err);
      }
      const text = await res.text();
      if (res.ok) return { kind: "ok" };
      if (res.status === 401 && attempt === 0) {
        // Expired or revoked early: one fresh token, once; a second 401 is a real refusal.
        this.o.tokens.invalidate();
        continue;
      }
      return classify(res, text);
    }
  }
}

function classify(res: Response, text: string): DeliveryOutcome {
  let err: OneApiError["error"];
  try {
    err = (JSON.parse(text) as OneApiError).error;
  } catch {
    err = undefined;
  }
  const what = `${res.status} ${err?.code ?? res.statusText}${err?.["@message"] ? `: ${err["@message"]}` : ""}`;
  if (res.status === 401 || res.status === 403) return { kind: "retry", errorClass: "sink_auth", message: what };
  if (res.status === 429)
    return {
      kind: "retry",
      errorClass: "sink_throttled",
      message: what,
      afterMs: retryAfter(res.headers.get("retry-after")),
    };
  // Permanent, but about the request, not a record: bisecting would dead-letter every record.
  if (res.status === 404 || REQUEST_LEVEL.test(err?.code ?? ""))
    return { kind: "retry", errorClass: "sink_config", message: what };
  // Kusto says whether a failure is permanent; without the flag, a 400 is (its status table: "badly formed and failed (permanently)").
  const permanent = err?.["@permanent"] ?? res.status === 400;
  if (permanent && res.status < 500) return { kind: "rejected", reason: what };
  return { kind: "retry", errorClass: "sink_unavailable", message: what };
}
