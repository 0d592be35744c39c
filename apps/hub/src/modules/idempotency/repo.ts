/** Idempotency keys: each first request with a key, and once it finished, its response. */
import type { Db } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";

export type IdempotencyKeyRow = Prisma.IdempotencyKeyGetPayload<object>;

export interface IdempotentRequest {
  principal: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
}

export interface StoredResponse {
  status: number;
  /** The response body, parsed when it is JSON; undefined when there was none. */
  body: unknown;
  headers: Record<string, string>;
}

export const idempotencyRepo = {
  /**
   * Records the request as running under its key, unless the key is taken. A key whose first
   * request never finished (its process died) is taken over after `abandonedAfterS`, for the
   * same request only. Returns the record's id, or undefined when the key is taken.
   */
  async claim(db: Db, r: IdempotentRequest, abandonedAfterS: number): Promise<string | undefined> {
    const inserted = await db.$queryRaw<{ id: string }[]>`
      INSERT INTO idempotency_keys (principal, key, method, path, request_hash)
      VALUES (${r.principal}, ${r.key}, ${r.method}, ${r.path}, ${r.requestHash})
      ON CONFLICT (principal, key) DO UPDATE
        SET method = EXCLUDED.method, path = EXCLUDED.path, request_hash = EXCLUDED.request_hash, created_at = now()
        WHERE idempotency_keys.response_status IS NULL
          AND idempotency_keys.created_at < now() - make_interval(secs => ${abandonedAfterS})
          AND idempotency_keys.request_hash = EXCLUDED.request_hash
      RETURNING id`;
    return inserted[0]?.id;
  },

  async find(db: Db, principal: string, key: string): Promise<IdempotencyKeyRow | null> {
    return db.idempotencyKey.findUnique({ where: { principal_key: { principal, key } } });
  },

  /** Frees a key whose request is still running, so a retry runs it again. */
  async release(db: Db, id: string): Promise<void> {
    await db.idempotencyKey.deleteMany({ where: { id, responseStatus: null } });
  },

  async complete(db: Db, id: string, response: StoredResponse): Promise<void> {
    await db.idempotencyKey.update({
      where: { id },
      data: {
        responseStatus: response.status,
        responseBody: response.body === undefined ? Prisma.JsonNull : (response.body as Prisma.InputJsonValue),
        responseHeaders: response.headers,
        completedAt: new Date(),
      },
    });
  },

  async purgeCreatedBefore(db: Db, before: Date): Promise<void> {
    await db.idempotencyKey.deleteMany({ where: { createdAt: { lt: before } } });
  },
};
export type IdempotencyRepo = typeof idempotencyRepo;
