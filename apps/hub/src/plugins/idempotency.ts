import { createHash } from "node:crypto";
import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import { BadRequest, Conflict, Unprocessable } from "@fm/domain";
import type { PrismaClient } from "../db/client.ts";
import { canonicalJson } from "../lib/canonical-json.ts";
import { decrypt, encrypt } from "../lib/seal.ts";
import { idempotencyKeys } from "../modules/idempotency/public.ts";

/** How long a key is remembered (Stripe and the IETF draft use 24 h). */
const RETENTION_MS = 24 * 3600 * 1000;
/** A key whose first request never finished (process died) may be reused after this. */
const ABANDONED_MS = 60 * 1000;
const KEY_RE = /^[\x21-\x7e]{1,200}$/;
// cache-control: a replay of a secret-bearing create (no-store) must not become cacheable.
const REPLAYED_HEADERS = ["cache-control", "content-type", "etag", "location"];

declare module "fastify" {
  interface FastifyRequest {
    idempotencyRecordId?: string;
  }
}

/** Runs `op` now and, while it fails, again in the background (after 250 ms, doubling, 6 times). */
function persistently(op: () => Promise<unknown>, giveUp: (err: unknown) => void, attempt = 0): Promise<void> {
  return op().then(
    () => {},
    (err: unknown) => {
      if (attempt < 6) setTimeout(() => void persistently(op, giveUp, attempt + 1), 250 * 2 ** attempt).unref();
      else giveUp(err);
    },
  );
}

/**
 * Idempotency-Key for mutating POSTs (draft-ietf-httpapi-idempotency-key-header): the first
 * request with a key is recorded before it runs; a repeat with the same key and body gets the
 * first response back (`Idempotent-Replayed: true`), with another body 422, and while the first
 * is still running 409. Keys are per principal. 5xx outcomes are not kept, so a retry re-runs.
 * Responses of `idempotent: "sealed"` routes (they show secrets once) are recorded encrypted
 * under the key encryption key: the database never holds them in clear.
 */
export const idempotencyPlugin = fp<{ prisma: PrismaClient; kek: Buffer }>(
  async (app: FastifyInstance, { prisma, kek }) => {
    app.addHook("preHandler", async (request, reply) => {
      if (!request.routeOptions.config?.idempotent) return;
      const key = request.headers["idempotency-key"];
      if (key === undefined) return;
      if (typeof key !== "string" || !KEY_RE.test(key)) {
        throw new BadRequest("invalid_idempotency_key", "Idempotency-Key must be 1-200 printable ASCII characters", {
          errors: [{ path: "headers.idempotency-key", message: "invalid" }],
        });
      }
      const principal = request.ctx.principal.id;
      const path = request.url.split("?")[0]!.replace(/\/+$/, "");
      const requestHash = createHash("sha256")
        .update(`${request.method} ${path}\n${canonicalJson(request.body ?? null)}`)
        .digest("hex");

      const claimed = await idempotencyKeys.claim(
        prisma,
        { principal, key, method: request.method, path, requestHash },
        ABANDONED_MS / 1000,
      );
      if (claimed) {
        request.idempotencyRecordId = claimed;
        return;
      }
      const existing = await idempotencyKeys.find(prisma, principal, key);
      if (!existing)
        throw new Conflict(
          "idempotency_key_in_progress",
          "A request with this Idempotency-Key is being processed; retry shortly",
        );
      if (existing.requestHash !== requestHash) {
        throw new Unprocessable(
          "idempotency_key_reused",
          "This Idempotency-Key was already used with a different request",
        );
      }
      if (existing.responseStatus === null) {
        throw new Conflict(
          "idempotency_key_in_progress",
          "A request with this Idempotency-Key is being processed; retry shortly",
          {
            headers: { "retry-after": "1" },
          },
        );
      }
      const headers = (existing.responseHeaders ?? {}) as Record<string, string>;
      const stored = existing.responseBody as { sealed?: unknown } | null;
      const body =
        stored && typeof stored === "object" && typeof stored.sealed === "string"
          ? decrypt(kek, stored.sealed)
          : JSON.stringify(existing.responseBody);
      reply.headers(headers).header("idempotent-replayed", "true").code(existing.responseStatus);
      return reply.serializer((p: unknown) => (typeof p === "string" ? p : JSON.stringify(p))).send(body);
    });

    app.addHook("onSend", async (request, reply, payload) => {
      const id = request.idempotencyRecordId;
      if (!id) return payload;
      request.idempotencyRecordId = undefined;
      if (reply.statusCode >= 500) {
        // Free the key for a retry. The failure may be the database itself (a busy pool): then
        // keep trying in the background, or the key would stay "in progress" until abandoned.
        await persistently(
          () => idempotencyKeys.release(prisma, id),
          (err) => request.log.warn({ err }, "could not free an Idempotency-Key after a failed request"),
        );
        return payload;
      }
      const headers: Record<string, string> = {};
      for (const h of REPLAYED_HEADERS) {
        const v = reply.getHeader(h);
        if (v !== undefined) headers[h] = String(v);
      }
      let body: unknown;
      if (request.routeOptions.config?.idempotent === "sealed" && typeof payload === "string") {
        body = { sealed: encrypt(kek, payload) };
      } else if (typeof payload === "string" && payload.length > 0) {
        try {
          body = JSON.parse(payload);
        } catch {
          body = payload;
        }
      }
      // The request's work is done and committed: the client gets this response even when it
      // cannot be recorded at once (a busy pool). Until it is, a repeat is told 409 and retries.
      await persistently(
        () => idempotencyKeys.complete(prisma, id, { status: reply.statusCode, body, headers }),
        (err) => request.log.warn({ err }, "could not record the response of an Idempotency-Key"),
      );
      return payload;
    });

    const purge = setInterval(() => {
      idempotencyKeys
        .purgeCreatedBefore(prisma, new Date(Date.now() - RETENTION_MS))
        .catch((err: unknown) => app.log.warn({ err }, "purging expired idempotency keys failed"));
    }, 3600_000);
    purge.unref();
    app.addHook("onClose", async () => clearInterval(purge));
  },
  { name: "idempotency", dependencies: ["request-context"] },
);
