import { z } from "zod";
import { PreconditionFailed } from "@fm/domain";

/** The optional If-Match request header of PATCH / PUT / DELETE routes. */
export const IfMatchHeaders = z.object({ "if-match": z.string().max(1000).optional() });

/** Strong ETag for a versioned row: changes with every write to it. */
export const etagOf = (row: { id: string; version: number }): string => `"${row.id}.${row.version}"`;

/**
 * Evaluates If-Match (RFC 9110 13.1.1) against the current representation: absent or `*`
 * passes; otherwise one of the listed strong tags must match. Weak tags never match.
 */
export function checkIfMatch(ifMatch: string | undefined, current: { id: string; version: number }): void {
  if (ifMatch === undefined) return;
  const trimmed = ifMatch.trim();
  if (trimmed === "*") return;
  const tags = trimmed.split(",").map((t) => t.trim());
  if (!tags.includes(etagOf(current))) {
    throw new PreconditionFailed(
      "etag_mismatch",
      "The resource changed since you read it (If-Match does not match its ETag); read it again and retry",
    );
  }
}
