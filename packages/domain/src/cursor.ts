import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";
import { BadRequest } from "./errors.ts";
import { SLUG_PATTERN } from "./common.ts";

/**
 * Keyset cursors. A cursor names the last id a client has seen; the next page is every row
 * with a greater id, in id order. Rows are never skipped or repeated while others write,
 * because the position does not move when rows are inserted or deleted before it (ids are
 * UUIDv7, so new rows sort after existing ones and a pager still reaches them).
 * The cursor is opaque to clients (base64url JSON) so its form can change.
 */
export function encodeCursor(lastId: string): string {
  return encodeBase64Url(JSON.stringify({ after: lastId }));
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function decodeCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(decodeBase64Url(cursor));
    if (
      parsed &&
      typeof parsed === "object" &&
      "after" in parsed &&
      typeof parsed.after === "string" &&
      UUID_RE.test(parsed.after)
    ) {
      return parsed.after.toLowerCase();
    }
  } catch {
    // fall through to the error below
  }
  throw invalidCursor();
}

/** A cursor over rows keyed by a slug (OAuth2 client ids): encoded like encodeCursor. */
export function decodeSlugCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(decodeBase64Url(cursor));
    if (parsed && typeof parsed === "object" && "after" in parsed && typeof parsed.after === "string")
      if (SLUG_PATTERN.test(parsed.after)) return parsed.after;
  } catch {
    // fall through to the error below
  }
  throw invalidCursor();
}

const invalidCursor = () =>
  new BadRequest("invalid_cursor", "The cursor is not one this API issued", {
    errors: [{ path: "cursor", message: "invalid cursor" }],
  });

/**
 * Cursors over rows ordered by an increasing sequence number rather than a UUID (a device's
 * history): the last number seen, equally opaque to clients.
 */
export function encodeSequenceCursor(lastId: bigint): string {
  return encodeBase64Url(lastId.toString());
}

export function decodeSequenceCursor(cursor: string): bigint {
  let raw: string;
  try {
    raw = decodeBase64Url(cursor);
  } catch {
    throw invalidCursor();
  }
  if (!/^\d{1,18}$/.test(raw)) throw invalidCursor();
  return BigInt(raw);
}
