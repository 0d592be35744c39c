import { z } from "zod";

/** Slugs as the contract defines them; also NetBox's and Kubernetes' safe subset. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const Slug = z
  .string()
  .regex(SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$ (lower-case letters, digits and '-', at most 63)");

export const Uuid = z.uuid();
export const Timestamp = z.iso.datetime({ offset: true }).describe("RFC 3339 UTC timestamp");

export const IdParams = z.strictObject({ id: Uuid });

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;

/** `?limit=&cursor=` shared by every list route. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(LIST_MAX_LIMIT).default(LIST_DEFAULT_LIMIT),
  cursor: z.string().max(512).optional().describe("Opaque cursor from a previous page's nextCursor"),
});

/** A list response as the contract defines it: exact total count and an opaque cursor. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    count: z.number().int().describe("Total number of items matching the filters"),
    nextCursor: z.string().nullable().describe("Pass as ?cursor= for the next page; null on the last page"),
  });
