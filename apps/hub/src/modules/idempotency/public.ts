/** What the Idempotency-Key plugin (plugins/idempotency.ts) uses of the stored keys: claim, find, complete, release, and purge the expired. */
import { idempotencyRepo, type IdempotencyRepo } from "./repo.ts";

export type { IdempotentRequest, StoredResponse } from "./repo.ts";

export const idempotencyKeys: Pick<IdempotencyRepo, "claim" | "find" | "complete" | "release" | "purgeCreatedBefore"> =
  idempotencyRepo;
