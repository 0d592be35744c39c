/** Field-level difference between two versions of a resource, for audit records. */
export type FieldDiff = Record<string, { before: unknown; after: unknown }>;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Top-level fields whose value differs. A created resource has `before` null (every field
 * appears with before: null), a deleted one `after` null. `ignore` drops bookkeeping fields.
 */
export function diffFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  ignore: readonly string[] = ["version", "updatedAt", "createdAt"],
): FieldDiff {
  const out: FieldDiff = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const k of keys) {
    if (ignore.includes(k)) continue;
    const b = before ? before[k] : null;
    const a = after ? after[k] : null;
    if (!same(b ?? null, a ?? null)) out[k] = { before: b ?? null, after: a ?? null };
  }
  return out;
}
