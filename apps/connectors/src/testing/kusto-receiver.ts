/**
 * A stand-in for what cannot run here: an Entra ID token endpoint and a Kusto cluster's streaming
 * ingestion, on one HTTP port, speaking their wire formats (each shape cited in ./SOURCES.md).
 * Tests drive its faults and read what it stored:
 *
 *  - `POST /{tenant}/oauth2/v2.0/token`: client credentials (form), answers a bearer token with
 *    `expires_in`; a wrong secret gets 401 `invalid_client` with an AADSTS7000215 description.
 *  - `POST /v1/rest/ingest/{db}/{table}?streamFormat=MultiJSON&mappingName=…`: checks the token
 *    (unknown or expired: 401, no body), stores the records atomically,
 *    de-duplicated by `recordId`. `throttle(n, s)`: the next n requests get 429 + Retry-After.
 *    A record `poison` matches: 400 BadRequest, `@permanent: true`, nothing stored.
 *  - `down()` / `up()`: stops answering (connections refused) and comes back on the same port.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { InventoryRecordSchema, type InventoryRecord } from "@fm/domain";

export interface KustoReceiverOptions {
  tenant?: string;
  clientId?: string;
  clientSecret?: string;
  database?: string;
  table?: string;
  mappingName?: string;
  /** Lifetime of the tokens it issues, seconds (Entra ID: about an hour). */
  tokenLifetimeS?: number;
  /** Records the mapping "cannot ingest". */
  poison?: (record: InventoryRecord) => boolean;
}

export class KustoReceiver {
  /** Stored records, by recordId (a duplicate replaces nothing). */
  readonly stored = new Map<string, InventoryRecord>();
  /** Every record id in the order accepted requests carried them, duplicates included. */
  readonly arrivals: string[] = [];
  /** When each record was first acknowledged (ms since the epoch). */
  readonly ackedAt = new Map<string, number>();
  duplicates = 0;
  requests = { token: 0, ingest: 0, unauthorized: 0, throttled: 0, rejected: 0 };
  /** When each ingest request arrived (performance.now(), ms), and whether it was throttled. */
  ingestLog: { at: number; throttled: boolean }[] = [];
  /** How long each ingest takes before it answers: a slow cluster, to kill a connector mid-batch. */
  ingestDelayMs = 0;
  /** Ingest requests being handled right now. */
  inFlight = 0;
  private readonly tokens = new Map<string, number>();
  private throttleLeft = 0;
  private throttleRetryAfterS = 1;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private port = 0;
  readonly o: Required<Omit<KustoReceiverOptions, "poison">> & Pick<KustoReceiverOptions, "poison">;

  constructor(opts: KustoReceiverOptions = {}) {
    this.o = {
      tenant: "72f988bf-86f1-41af-91ab-2d7cd011db47",
      clientId: "matrix-connector-test",
      clientSecret: randomBytes(24).toString("base64url"),
      database: "Matrix",
      table: "FleetInventory",
      mappingName: "FleetInventoryMapping",
      tokenLifetimeS: 3599,
      ...opts,
    };
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => void this.handle(req, res));
    server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }

  /** Every token issued so far stops working: the next ingest gets 401. */
  expireTokens(): void {
    for (const t of this.tokens.keys()) this.tokens.set(t, 0);
  }

  throttle(requests: number, retryAfterS: number): void {
    this.throttleLeft = requests;
    this.throttleRetryAfterS = retryAfterS;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "POST" && url.pathname === `/${this.o.tenant}/oauth2/v2.0/token`) return this.token(body, res);
    if (req.method === "POST" && url.pathname === `/v1/rest/ingest/${this.o.database}/${this.o.table}`) {
      this.inFlight++;
      try {
        if (this.ingestDelayMs) await new Promise((r) => setTimeout(r, this.ingestDelayMs));
        return this.ingest(req, url, body, res);
      } finally {
        this.inFlight--;
      }
    }
    oneApiError(res, 404, "NotFound", "Entity not found", true);
  }

  /**
   * The client-credentials grant. Request form and success body `{token_type, expires_in,
   * access_token}` (nothing else): MicrosoftDocs/entra-docs
   * docs/identity-platform/v2-oauth2-client-creds-grant-flow.md @ 03033ebd9371cc1780865855f0fdff9a8d077542
   * ("Access token request with a shared secret", "Successful response"). Refusals: ./aadError.
   */
  private token(body: string, res: ServerResponse): void {
    this.requests.token++;
    const form = new URLSearchParams(body);
    if (form.get("grant_type") !== "client_credentials")
      return aadError(res, 400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.");
    if (form.get("scope") !== `${this.url}/.default`)
      return aadError(
        res,
        400,
        "invalid_scope",
        70011,
        `The provided value for the input parameter 'scope' is not valid.`,
      );
    if (form.get("client_id") !== this.o.clientId)
      return aadError(
        res,
        400,
        "unauthorized_client",
        700016,
        `Application with identifier was not found in the directory.`,
      );
    if (form.get("client_secret") !== this.o.clientSecret)
      return aadError(res, 401, "invalid_client", 7000215, "Invalid client secret provided.");
    const token = randomBytes(32).toString("base64url");
    this.tokens.set(token, Date.now() + this.o.tokenLifetimeS * 1000);
    json(res, 200, {
      token_type: "Bearer",
      expires_in: this.o.tokenLifetimeS,
      access_token: token,
    });
  }

  /**
   * Streaming ingestion. Path, `streamFormat`, `mappingName` (required for MultiJSON), headers and
   * a body of UTF-8 JSON objects one per line: MicrosoftDocs/dataexplorer-docs
   * data-explorer/kusto/api/rest/streaming-ingest.md @ f06d991f4f4440f990134edb77f4aa1fe177ac06.
   * Status codes (400 permanent, 401, 404, 429 throttled) and "a 4xx or a 5xx error, other than
   * 401" carrying a JSON error body: data-explorer/kusto/api/rest/response.md @
   * 73a8ce8d2d797c381b979ba861505ca5a90513e5. `Authorization: Bearer <Entra ID token>`:
   * data-explorer/kusto/api/rest/authentication.md @ 64b56d5c18a254a860696e3e9839e47d92f2318e.
   */
  private ingest(req: IncomingMessage, url: URL, body: string, res: ServerResponse): void {
    this.requests.ingest++;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const expiry = token ? this.tokens.get(token) : undefined;
    if (expiry === undefined || expiry <= Date.now()) {
      this.requests.unauthorized++;
      // 401 is the one error response.md leaves without a JSON body: the status is all a client gets.
      return void res.writeHead(401).end();
    }
    const throttled = this.throttleLeft > 0;
    this.ingestLog.push({ at: performance.now(), throttled });
    if (throttled) {
      this.throttleLeft--;
      this.requests.throttled++;
      // 429 TooManyRequests is response.md's; Microsoft does not promise a Retry-After with it, so
      // the sink honours one when present (RFC 9110 §10.2.3, delay-seconds) and backs off without.
      res.setHeader("retry-after", String(this.throttleRetryAfterS));
      return oneApiError(res, 429, "TooManyRequests", "Request is denied due to throttling.", false);
    }
    if (
      url.searchParams.get("streamFormat") !== "MultiJSON" ||
      url.searchParams.get("mappingName") !== this.o.mappingName
    )
      return oneApiError(res, 400, "BadRequest_MappingReferenceWasNotFound", "Mapping reference was not found.", true);
    const records: InventoryRecord[] = [];
    for (const line of body.split("\n").filter((l) => l.trim())) {
      const parsed = InventoryRecordSchema.safeParse(safeJson(line));
      if (!parsed.success || this.o.poison?.(parsed.data)) {
        this.requests.rejected++;
        return oneApiError(
          res,
          400,
          "BadRequest_InvalidBlob",
          "Stream_WrongNumberOfFields: the record does not fit the mapping",
          true,
        );
      }
      records.push(parsed.data);
    }
    // Atomic: all of the request or nothing, as streaming ingestion is.
    for (const r of records) {
      this.arrivals.push(r.recordId);
      if (this.stored.has(r.recordId)) this.duplicates++;
      else {
        this.stored.set(r.recordId, r);
        this.ackedAt.set(r.recordId, Date.now());
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

/**
 * Kusto's error body: the OneApiError envelope with its `@`-fields, as the Kusto SDKs parse it:
 * Azure/azure-kusto-java data/src/main/java/com/microsoft/azure/kusto/data/exceptions/OneApiError.java
 * @ 322d8bced453a6681720edd975a7dbd27c42879f; Azure/azure-kusto-go kusto/data/errors/errors.go
 * @ 5d94ac91eae057044214dd0215164ade6980a99f (`@permanent`: whether a retry can succeed).
 */
function oneApiError(res: ServerResponse, status: number, code: string, message: string, permanent: boolean): void {
  json(res, status, {
    error: {
      code,
      message: status === 429 ? "Request is denied due to throttling." : "Request is invalid and cannot be executed.",
      "@type": "Kusto.DataNode.Exceptions.KustoRequestException",
      "@message": message,
      "@context": {
        timestamp: new Date().toISOString(),
        serviceAlias: "MATRIX",
        machineName: "KEngine000000",
        processName: "Kusto.WinSvc.Svc",
        processId: 4242,
        threadId: 4343,
        clientRequestId: randomUUID(),
        activityId: randomUUID(),
        subActivityId: randomUUID(),
        activityType: "DN.FE.StreamingIngest",
        parentActivityId: randomUUID(),
        activityStack: "",
      },
      "@permanent": permanent,
    },
  });
}

/**
 * The Microsoft identity platform's token error body `{error, error_description: "AADSTS…\r\nTrace
 * ID…", error_codes, timestamp, trace_id, correlation_id, error_uri}` and the AADSTS codes used
 * (70003, 70011, 700016, 7000215): MicrosoftDocs/entra-docs docs/identity-platform/reference-error-codes.md
 * @ 3164b3b5d031edef0ad334ba09d3ea6dcb619c1a. 400 for a bad request, 401 for `invalid_client`
 * (client authentication failed): RFC 6749 §5.2.
 */
function aadError(res: ServerResponse, status: number, error: string, code: number, text: string): void {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date().toISOString().replace("T", " ").slice(0, 19) + "Z";
  json(res, status, {
    error,
    error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
    error_codes: [code],
    timestamp,
    trace_id: traceId,
    correlation_id: correlationId,
    error_uri: `https://login.microsoftonline.com/error?code=${code}`,
  });
}
