/**
 * Field-level difference between two versions of a resource, for audit records. Keys are field
 * paths: `cordoned`, `ironic.provisionState` (a field of a nested object), or
 * `conditions.Provisioned` (the element of a list of typed entries, such as conditions, whose
 * `type` is Provisioned).
 */
export type FieldDiff = Record<string, { before: unknown; after: unknown }>;

type Plain = Record<string, unknown>;

/**
 * Equal as JSON values: key order aside, null and undefined alike, a Date equal to its ISO string
 * (as both serialise alike). What a jsonb column stored (keys reordered) equals what was written.
 * Structural, not by serialising: a reflection compares thousands of devices per push.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a == null || b == null) return (a ?? null) === (b ?? null);
  if (a instanceof Date || b instanceof Date) return JSON.stringify(a) === JSON.stringify(b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Plain;
  const y = b as Plain;
  // An absent key and an undefined one serialise alike (both absent): count the defined ones.
  let defined = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    if (!sameJson(x[k], y[k])) return false;
    defined++;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
}

/** A JSON object: not a list, not a Date or another class's instance. */
const isPlain = (v: unknown): v is Plain => {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};
/**
 * A list of Kubernetes-style conditions: objects with a `status` and distinct string `type`s
 * (not, say, interfaces, whose `type` is their kind and repeats).
 */
function typedList(v: unknown): v is (Plain & { type: string })[] {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (!isPlain(e) || typeof e.type !== "string" || !("status" in e)) return false;
    for (let j = 0; j < i; j++) if ((v[j] as Plain).type === e.type) return false;
  }
  return true;
}

function diffInto(out: FieldDiff, path: string, b: unknown, a: unknown): void {
  // Both sides present and of one shape: only what changed inside them, so an audit record of
  // a one-field change names that field rather than repeating the whole object twice. (Key by
  // key straight away: comparing the whole objects first walked them twice.)
  if (isPlain(b) && isPlain(a)) {
    for (const k of Object.keys(b)) diffKey(out, path, k, b[k] ?? null, a[k] ?? null);
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) diffKey(out, path, k, null, a[k] ?? null);
    return;
  }
  if (sameJson(b, a)) return;
  if (typedList(b) && typedList(a) && (b.length || a.length)) {
    const before = new Map(b.map((e) => [e.type, e]));
    const after = new Map(a.map((e) => [e.type, e]));
    for (const t of new Set([...before.keys(), ...after.keys()])) {
      const x = before.get(t) ?? null;
      const y = after.get(t) ?? null;
      if (!sameJson(x, y)) out[`${path}.${t}`] = { before: x, after: y };
    }
    return;
  }
  out[path] = { before: b, after: a };
}

/** A field inside an object: its path is built only when the values may differ (most are equal). */
function diffKey(out: FieldDiff, path: string, key: string, b: unknown, a: unknown): void {
  if (b !== a) diffInto(out, `${path}.${key}`, b, a);
}

/**
 * What differs between two versions. A created resource has `before` null (every top-level field
 * appears with before: null), a deleted one `after` null. `ignore` drops bookkeeping fields.
 */
export function diffFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  ignore: readonly string[] = ["version", "updatedAt", "createdAt"],
): FieldDiff {
  const out: FieldDiff = {};
  const field = (k: string) => {
    if (ignore.includes(k)) return;
    const b = before ? (before[k] ?? null) : null;
    const a = after ? (after[k] ?? null) : null;
    if (before && after) {
      if (b !== a) diffInto(out, k, b, a);
    } else if (!sameJson(b, a)) out[k] = { before: b, after: a };
  };
  if (before) for (const k of Object.keys(before)) field(k);
  if (after) for (const k of Object.keys(after)) if (!before || !Object.hasOwn(before, k)) field(k);
  return out;
}
