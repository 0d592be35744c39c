/**
 * Query filters as django-filter applies them in NetBox's filtersets. Repeated parameters are
 * ORed, different ones ANDed. ModelMultipleChoice filters (site_id, cluster_id, role, ...) reject
 * a malformed or unknown value with 400 `{"<param>": ["<Django message>"]}`; number filters
 * reject non-numbers ("Enter a number."); unknown parameters are ignored, as django-filter does
 * (NetBox has no site_id filter on MAC or IP addresses, so it is ignored there, which is a trap
 * for clients).
 */
import type { Timestamps } from "./store.ts";
import type { View } from "./view.ts";

export class FilterError extends Error {
  constructor(
    readonly param: string,
    readonly messages: string[],
  ) {
    super(`${param}: ${messages.join(" ")}`);
  }
}

export type Filter<T> = (values: string[], v: View) => (row: T) => boolean;

/** ModelMultipleChoiceFilter on a primary key: a malformed or unknown id is a 400. */
export function modelIds<T>(
  param: string,
  rows: (v: View) => Array<{ id: number }>,
  get: (row: T, v: View) => number | number[] | null,
): Filter<T> {
  return (values, v) => {
    const known = new Set(rows(v).map((r) => r.id));
    const ids = new Set<number>();
    for (const raw of values) {
      if (!/^\d+$/.test(raw)) throw new FilterError(param, [`\u201c${raw}\u201d is not a valid value.`]);
      const id = Number(raw);
      if (!known.has(id))
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
      ids.add(id);
    }
    return (row) => {
      const got = get(row, v);
      return Array.isArray(got) ? got.some((g) => ids.has(g)) : got != null && ids.has(got);
    };
  };
}

/** ModelMultipleChoiceFilter with to_field_name (role=<slug>, device=<name>). */
export function modelField<T, R extends { id: number }>(
  param: string,
  rows: (v: View) => R[],
  field: (r: R) => string | null,
  get: (row: T, v: View) => number | null,
): Filter<T> {
  return (values, v) => {
    const byField = new Map(rows(v).map((r) => [field(r), r.id]));
    const ids = new Set<number>();
    for (const raw of values) {
      const id = byField.get(raw);
      if (id === undefined)
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
      ids.add(id);
    }
    return (row) => {
      const got = get(row, v);
      return got != null && ids.has(got);
    };
  };
}

/** MultiValueNumberFilter: non-numbers are a 400, unknown numbers just match nothing. */
export function numbers<T>(param: string, get: (row: T, v: View) => number | number[] | null): Filter<T> {
  return (values, v) => {
    const wanted = new Set<number>();
    for (const raw of values) {
      if (raw.trim() === "" || !Number.isFinite(Number(raw))) throw new FilterError(param, ["Enter a number."]);
      wanted.add(Number(raw));
    }
    return (row) => {
      const got = get(row, v);
      return Array.isArray(got) ? got.some((g) => wanted.has(g)) : got != null && wanted.has(got);
    };
  };
}

/** MultipleChoiceFilter. */
export function choices<T>(param: string, labels: Record<string, string>, get: (row: T) => string | null): Filter<T> {
  return (values) => {
    for (const raw of values)
      if (!(raw in labels))
        throw new FilterError(param, [`Select a valid choice. ${raw} is not one of the available choices.`]);
    const wanted = new Set(values);
    return (row) => wanted.has(get(row) ?? "");
  };
}

/** MultiValueCharFilter (exact). */
export function exact<T>(get: (row: T) => string | null): Filter<T> {
  return (values) => {
    const wanted = new Set(values);
    return (row) => wanted.has(get(row) ?? "");
  };
}

/** MultiValueDateTimeFilter with a lookup (gte/lte/gt/lt). */
export function dateTime<T>(param: string, op: "gte" | "lte" | "gt" | "lt", get: (row: T) => string): Filter<T> {
  return (values) => {
    const bounds = values.map((raw) => {
      const t = parseDjangoDateTime(raw);
      if (t === undefined) throw new FilterError(param, ["Enter a valid date/time."]);
      return t;
    });
    return (row) => {
      const t = Date.parse(get(row));
      return bounds.some((b) => (op === "gte" ? t >= b : op === "lte" ? t <= b : op === "gt" ? t > b : t < b));
    };
  };
}

/** What Django's DateTimeField accepts: ISO 8601 (with T or a space), optionally a date alone. */
function parseDjangoDateTime(raw: string): number | undefined {
  const s = raw.trim().replace(" ", "T");
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) return undefined;
  // Naive values are in TIME_ZONE, UTC by default.
  const withZone = /T/.test(s) && !/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? `${s}Z` : s;
  const t = Date.parse(withZone.length === 10 ? `${withZone}T00:00:00Z` : withZone);
  return Number.isNaN(t) ? undefined : t;
}

export const updated = <T extends Timestamps>(): Record<string, Filter<T>> => ({
  last_updated__gte: dateTime("last_updated__gte", "gte", (r: T) => r.last_updated),
  last_updated__lte: dateTime("last_updated__lte", "lte", (r: T) => r.last_updated),
  last_updated__gt: dateTime("last_updated__gt", "gt", (r: T) => r.last_updated),
  last_updated__lt: dateTime("last_updated__lt", "lt", (r: T) => r.last_updated),
  created__gte: dateTime("created__gte", "gte", (r: T) => r.created),
});

export const sitesOf = (v: View) => v.data.sites;
