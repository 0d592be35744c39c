import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import fp from "fastify-plugin";
import FindMyWay from "find-my-way";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { DomainError, ServiceUnavailable, problemType, type FieldError, type Problem } from "@fm/domain";
import { newTraceId, traceIdOf } from "../lib/trace.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function sendProblem(
  reply: FastifyReply,
  status: number,
  title: string,
  code: string,
  detail: string,
  errors?: FieldError[],
): FastifyReply {
  const body: Problem = {
    type: problemType(code),
    title,
    status,
    detail,
    code,
    requestId: String(reply.request.id),
    traceId: traceIdOf(reply.request.raw),
  };
  if (errors) body.errors = errors;
  return reply.code(status).type(PROBLEM_CONTENT_TYPE).serializer(JSON.stringify).send(body);
}

/**
 * Errors Fastify meets before any route (a path that does not decode, a path parameter over
 * its length): Fastify's `frameworkErrors` option, so they are problem+json like the rest.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-request-id", request.id);
  if (err.code === "FST_ERR_MAX_PARAM_LENGTH")
    void sendProblem(reply, 414, "URI Too Long", "uri_too_long", "A path segment is longer than any id or name");
  else if (err.code === "FST_ERR_BAD_URL")
    void sendProblem(reply, 400, "Bad Request", "bad_url", "The path is not valid percent-encoded UTF-8");
  else void sendProblem(reply, 400, "Bad Request", "bad_request", "The request cannot be routed");
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request (Fastify's `clientErrorHandler`
 * option): headers over the size limit (431), a request that is not HTTP (400), a client too
 * slow to send its request (408). The connection cannot continue: problem+json, then close.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [status, code, detail] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "headers_too_large", "The request headers are larger than the hub accepts"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "request_timeout", "The request was not received in time"]
        : [400, "malformed_http", "The request is not valid HTTP/1.1"];
  const requestId = randomUUID();
  const title = STATUS_CODES[status] ?? "Bad Request";
  // No request was parsed, so no traceparent can be honoured: the answer starts a trace of its own.
  const traceId = newTraceId();
  const body = JSON.stringify({
    type: problemType(code),
    title,
    status,
    detail,
    code,
    requestId,
    traceId,
  } satisfies Problem);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}

/** Fastify's own client errors (body parsing, content type, size): status, stable code, title. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; title: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: "payload_too_large", title: "Content Too Large" },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: "unsupported_media_type", title: "Unsupported Media Type" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: "invalid_content_length", title: "Bad Request" },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "empty_body", title: "Bad Request" },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: "malformed_json", title: "Bad Request" },
  FST_ERR_CTP_EMPTY_TYPE: { status: 415, code: "unsupported_media_type", title: "Unsupported Media Type" },
  FST_ERR_CTP_INVALID_TYPE: { status: 415, code: "unsupported_media_type", title: "Unsupported Media Type" },
};

/**
 * Prisma's codes for "the database cannot be reached right now" (unreachable, timed out, closed
 * the connection, pool exhausted): the request may succeed later, so 503 rather than 500.
 */
const UNAVAILABLE_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/**
 * The same seen from the driver underneath (pg and the Prisma adapter pass these through): a
 * socket refused or cut, SQLSTATE class 08 (connection exception) and 57P01-57P03 (the server
 * terminated the session, is shutting down, or is not accepting connections yet).
 */
const DRIVER_UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "57P01",
  "57P02",
  "57P03",
]);
const DRIVER_UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Connection terminated due to connection timeout|terminating connection)/;

/** The Prisma pg adapter's kinds for the same (`meta.driverAdapterError.cause.kind`). */
const ADAPTER_UNAVAILABLE_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

const unavailableCode = (code: unknown): boolean =>
  typeof code === "string" && (DRIVER_UNAVAILABLE_CODES.has(code) || code.startsWith("08"));

function isDatabaseUnavailable(err: unknown): boolean {
  // The cause chain: Prisma wraps adapter errors, which wrap the driver's.
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (e.name === "PrismaClientKnownRequestError" && typeof code === "string" && UNAVAILABLE_CODES.has(code))
      return true;
    const adapter = (e as { meta?: { driverAdapterError?: { cause?: { kind?: string; code?: unknown } } } }).meta
      ?.driverAdapterError?.cause;
    if (adapter && (ADAPTER_UNAVAILABLE_KINDS.has(adapter.kind ?? "") || unavailableCode(adapter.code))) return true;
    if (unavailableCode(code) || DRIVER_UNAVAILABLE_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * Every pooled connection stayed busy for the whole wait (a burst of writes larger than the
 * pool): pg-pool's "timeout exceeded when trying to connect", or Prisma's "Unable to start a
 * transaction in the given time" (P2028). Nothing was written; the client should retry soon.
 */
function isDatabaseBusy(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.message === "timeout exceeded when trying to connect") return true;
  const code = (err as { code?: unknown }).code;
  return code === "P2028" && /Unable to start a transaction in the given time/.test(err.message);
}

/**
 * The request's transaction outlived its time budget (Prisma's interactive transaction timeout,
 * P2028 "…on an expired transaction"), typically waiting for rows another write held, such as a
 * device a reflection push was stamping. Prisma rolled it back: nothing was changed. Also
 * PostgreSQL's own lock_timeout (55P03), should a session set one, and a transaction PostgreSQL
 * ended to break a deadlock (40P01) or a serialization conflict (40001): rolled back, safe to retry.
 */
function isTransactionExpired(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "P2028" && /expired transaction/.test(e.message)) return true;
    // Prisma words a deadlock or a serialization failure as P2034 (its adapter: kind
    // TransactionWriteConflict, originalCode 40P01 or 40001).
    if (code === "55P03" || code === "40P01" || code === "40001" || code === "P2034") return true;
  }
  return false;
}

function validationErrors(err: FastifyError): FieldError[] {
  const part = err.validationContext ?? "request";
  const out: FieldError[] = [];
  for (const v of err.validation ?? []) {
    const base = v.instancePath.replace(/^\//, "").replace(/\//g, ".");
    const keys = (v.params as { keys?: unknown }).keys;
    if (v.keyword === "unrecognized_keys" && Array.isArray(keys)) {
      for (const k of keys)
        out.push({ path: [part, base, String(k)].filter(Boolean).join("."), message: "unknown field" });
    } else {
      out.push({ path: [part, base].filter(Boolean).join("."), message: v.message ?? "invalid" });
    }
  }
  return out;
}

/**
 * One place that turns every failure into RFC 9457 problem+json: domain errors, validation
 * errors, Fastify's client errors, unknown routes (404), known routes with another method
 * (405 with Allow), and anything unexpected (an opaque 500 carrying the request id; the cause
 * is logged, never sent).
 */
export const problemPlugin = fp(
  async (app: FastifyInstance) => {
    // A second router that knows every route, to tell "no such path" (404) from "no such
    // method on this path" (405). Fastify's router answers 404 for both.
    const known = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
    app.addHook("onRoute", (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) {
        try {
          known.on(m as never, route.url, () => {});
        } catch {
          // the same route registered twice (e.g. HEAD for GET): already known
        }
      }
    });

    app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split("?")[0] ?? "/";
      const allowed = (["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const).filter(
        (m) => m !== request.method && known.find(m, path) !== null,
      );
      if (allowed.length > 0) {
        reply.header("allow", allowed.join(", "));
        return sendProblem(
          reply,
          405,
          "Method Not Allowed",
          "method_not_allowed",
          `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`,
        );
      }
      return sendProblem(reply, 404, "Not Found", "route_not_found", `No route ${request.method} ${path}`);
    });

    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (isDatabaseBusy(err)) {
        request.log.warn({ err: err.message }, "database connection pool busy; shedding the request");
        reply.header("retry-after", "1");
        return sendProblem(
          reply,
          503,
          "Service Unavailable",
          "database_busy",
          "Every database connection is busy; nothing was changed, retry shortly",
        );
      }
      if (isTransactionExpired(err)) {
        request.log.warn({ err: err.message }, "transaction expired waiting for the database; nothing was changed");
        reply.header("retry-after", "2");
        return sendProblem(
          reply,
          503,
          "Service Unavailable",
          "database_contention",
          "The change waited too long for other writes to the same rows and was not made; retry shortly",
        );
      }
      if (isDatabaseUnavailable(err)) {
        request.log.warn({ err: err.message }, "database unavailable");
        reply.header("retry-after", "5");
        return sendProblem(
          reply,
          503,
          "Service Unavailable",
          "database_unavailable",
          "The database is unreachable; retry shortly",
        );
      }
      if (err instanceof DomainError) {
        if (err.headers) reply.headers(err.headers);
        if (err.status >= 500 && !(err instanceof ServiceUnavailable)) request.log.error({ err }, err.message);
        return sendProblem(reply, err.status, err.title, err.code, err.message, err.errors);
      }
      if (hasZodFastifySchemaValidationErrors(err)) {
        const errors = validationErrors(err);
        const detail = errors.map((e) => `${e.path}: ${e.message}`).join("; ");
        return sendProblem(
          reply,
          400,
          "Bad Request",
          "validation_failed",
          detail || "The request is not valid",
          errors,
        );
      }
      const known = err.code ? FASTIFY_ERRORS[err.code] : undefined;
      if (known) return sendProblem(reply, known.status, known.title, known.code, err.message);
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return sendProblem(
          reply,
          err.statusCode,
          STATUS_CODES[err.statusCode] ?? "Bad Request",
          (err.code ?? "bad_request").toLowerCase(),
          err.message,
        );
      }
      request.log.error({ err }, "unhandled error");
      return sendProblem(
        reply,
        500,
        "Internal Server Error",
        "internal_error",
        `An unexpected error occurred; quote request id ${request.id} when reporting it`,
      );
    });
  },
  { name: "problem" },
);
