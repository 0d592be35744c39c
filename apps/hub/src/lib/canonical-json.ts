/**
 * JSON with object keys sorted: one text for all values equal as JSON (a request's hash, a
 * comparison key). Comparing two values needs no text: sameJson (@fm/domain).
 */
export const canonicalJson = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val) && !(val instanceof Date)
      ? Object.fromEntries(Object.entries(val).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : val,
  );
