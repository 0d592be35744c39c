/**
 * Instant queries against the Prometheus HTTP API (`GET <base>/api/v1/query?query=…`), which is
 * also what Mimir serves under its `/prometheus` prefix: the base URL carries that prefix when
 * there is one. Optional basic auth (the rollout guide's `mimir-login` username and password)
 * and `X-Scope-OrgID` (Mimir's tenant header).
 *
 * Wire format (Prometheus docs, "HTTP API", v2.42): `{"status":"success","data":{"resultType":
 * "vector","result":[{"metric":{…},"value":[<unix seconds>,"<value as string>"]}]}}`; a failure is
 * `{"status":"error","errorType":"bad_data"|"execution"|"timeout"|…,"error":"…"}` with 400 (bad
 * query), 422 (cannot be executed), 503 (timed out or aborted). 429, 502-504 and transport
 * failures are retried with backoff; a bad query is not. Credentials never enter messages.
 */
import { z } from "zod";
import {
  SourceApiError,
  SourceUnavailableError,
  describeParseError,
  isOutage,
  noAnswer,
  sendWithRetries,
} from "../http/http.ts";

export interface PrometheusClientOptions {
  /** e.g. http://prometheus:9090, or https://mimir.example/prometheus */
  baseUrl: string;
  basicAuth?: { username: string; password: string } | undefined;
  /** Mimir's tenant (X-Scope-OrgID); not sent when undefined. */
  orgId?: string | undefined;
  timeoutMs?: number;
  maxAttempts?: number;
  backoffMs?: number;
  fetch?: typeof fetch;
}

/** One series of an instant vector: its labels and its value. */
export interface PromSample {
  labels: Record<string, string>;
  value: number;
}

export class PrometheusApiError extends SourceApiError {
  constructor(
    status: number,
    readonly errorType: string | null,
    message: string,
  ) {
    super("prometheus", status, message);
    this.name = "PrometheusApiError";
  }
}

/** No answer from Prometheus/Mimir after every attempt. */
export class PrometheusUnavailableError extends SourceUnavailableError {}

const QueryResponseSchema = z.looseObject({
  status: z.literal("success"),
  data: z.looseObject({
    resultType: z.string(),
    result: z.array(
      z.looseObject({
        metric: z.record(z.string(), z.string()),
        value: z.tuple([z.number(), z.string()]),
      }),
    ),
  }),
});
const ErrorResponseSchema = z.looseObject({ errorType: z.string().optional(), error: z.string().optional() });

export class PrometheusClient {
  readonly baseUrl: string;
  private readonly opts: Required<Omit<PrometheusClientOptions, "basicAuth" | "orgId">> &
    Pick<PrometheusClientOptions, "basicAuth" | "orgId">;

  constructor(opts: PrometheusClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.opts = {
      ...opts,
      baseUrl: this.baseUrl,
      timeoutMs: opts.timeoutMs ?? 30_000,
      maxAttempts: opts.maxAttempts ?? 3,
      backoffMs: opts.backoffMs ?? 200,
      fetch: opts.fetch ?? globalThis.fetch,
    };
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { accept: "application/json" };
    const auth = this.opts.basicAuth;
    if (auth) h.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
    if (this.opts.orgId) h["x-scope-orgid"] = this.opts.orgId;
    return h;
  }

  /** An instant query; the expression must return a vector (a scalar or matrix is an error). */
  async query(expr: string): Promise<PromSample[]> {
    const url = `${this.baseUrl}/api/v1/query?query=${encodeURIComponent(expr)}`;
    const request = "GET /api/v1/query";
    const { text } = await sendWithRetries<PrometheusApiError>({
      url,
      method: "GET",
      headers: () => this.headers(),
      fetch: this.opts.fetch,
      timeoutMs: this.opts.timeoutMs,
      attempts: this.opts.maxAttempts,
      backoffMs: this.opts.backoffMs,
      judge: (res, body) => {
        if (res.ok) return { kind: "ok" };
        let parsed: z.infer<typeof ErrorResponseSchema> = {};
        try {
          parsed = ErrorResponseSchema.parse(JSON.parse(body));
        } catch {
          // Not Prometheus answering (a proxy, Mimir's gateway): keep the status and the start of the text.
        }
        const detail = parsed.error ?? (body.trim().slice(0, 200) || res.statusText);
        const error = new PrometheusApiError(
          res.status,
          parsed.errorType ?? null,
          `${request}: ${res.status} ${parsed.errorType ?? ""} ${detail}`.replace(/\s+/g, " ").trim(),
        );
        return isOutage(res.status, "prometheus") ? { kind: "retry", error } : { kind: "fail", error };
      },
      unavailable: (cause, attempts) =>
        new PrometheusUnavailableError(noAnswer(request, "Prometheus", attempts, cause), attempts, { cause }),
    });
    let body: z.infer<typeof QueryResponseSchema>;
    try {
      body = QueryResponseSchema.parse(JSON.parse(text));
    } catch (err) {
      throw new PrometheusApiError(200, null, `${request}: unexpected answer: ${describeParseError(err)}`);
    }
    if (body.data.resultType !== "vector")
      throw new PrometheusApiError(
        200,
        "bad_data",
        `${request}: the expression returns a ${body.data.resultType}, not an instant vector`,
      );
    return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
  }
}
