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

/**
 * Cursors over a list that may be sorted by a field (the device list): the last row's id and
 * its sort value, with the sort and a fingerprint of the filters that page ran under. The next
 * page is every row after (value, id) in that order, so the cursor is exact whatever is
 * written meanwhile, and it means nothing under another sort or other filters: such a use is a
 * 400 naming `cursor` instead of a page silently starting somewhere else.
 */
export interface ListPosition {
  after: string;
  /** The last row's sort value as text (a timestamp in RFC 3339); null for a null; absent in id order. */
  value?: string | null;
}
export interface ListShape {
  /** The sort as the query spelled it (`-name`), or `id` for the default id order. */
  sort: string;
  /** filterFingerprint() of the query's filters. */
  filters: string;
}

export function encodeListCursor(pos: ListPosition, shape: ListShape): string {
  return encodeBase64Url(JSON.stringify({ after: pos.after, v: pos.value, s: shape.sort, f: shape.filters }));
}

export function decodeListCursor(cursor: string, shape: ListShape): ListPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeBase64Url(cursor));
  } catch {
    throw invalidCursor();
  }
  if (!parsed || typeof parsed !== "object" || !("after" in parsed) || typeof parsed.after !== "string")
    throw invalidCursor();
  if (!UUID_RE.test(parsed.after)) throw invalidCursor();
  const after = parsed.after.toLowerCase();
  // A cursor issued before lists carried their shape: id order, as it was then.
  if (!("s" in parsed)) {
    if (shape.sort === "id") return { after };
    throw cursorMismatch();
  }
  const p = parsed as { s?: unknown; f?: unknown; v?: unknown };
  if (p.s !== shape.sort || p.f !== shape.filters) throw cursorMismatch();
  if (shape.sort === "id") return { after };
  if (p.v !== null && (typeof p.v !== "string" || p.v.length > 512)) throw invalidCursor();
  return { after, value: p.v };
}

const cursorMismatch = () =>
  new BadRequest(
    "cursor_mismatch",
    "The cursor belongs to a list with another sort or other filters: start again without a cursor",
    { errors: [{ path: "cursor", message: "issued for another sort or other filters" }] },
  );

/**
 * A short fingerprint of a list's filters (the defined values, by key): the same filters
 * spelled in any order give the same text. FNV-1a, 32 bits: it tells a mistaken reuse, it
 * guards nothing secret (the cursor is the client's own).
 */
export function filterFingerprint(filters: Record<string, unknown>): string {
  const text = JSON.stringify(
    Object.entries(filters)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}
