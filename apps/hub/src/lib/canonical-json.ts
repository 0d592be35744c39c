/** JSON with object keys sorted, so values that jsonb stored (and reordered) compare equal. */
export const canonicalJson = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val) && !(val instanceof Date)
      ? Object.fromEntries(Object.entries(val).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : val,
  );
