/**
 * Ordering and pagination of lists, as NetBox's OptionalLimitOffsetPagination (DRF's
 * LimitOffsetPagination) does it (SOURCES.md S4, S5): PAGINATE_COUNT 50, MAX_PAGE_SIZE 1000
 * (limit=0 and limit>1000 both give 1000, a bad limit gives 50). `next`/`previous` are absolute
 * URLs built from the request's Host, with the query re-encoded in sorted key order as DRF's
 * replace_query_param does; `previous` drops `offset` when it would be 0.
 */

const PAGINATE_COUNT = 50;
const MAX_PAGE_SIZE = 1000;

const ORDERABLE = new Set(["id", "name", "time", "last_updated", "created", "slug", "model", "address", "mac_address"]);

export function order<T extends { id: number }>(rows: T[], ordering: string | undefined): T[] {
  const keys = (ordering ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => ORDERABLE.has(k.replace(/^-/, "")));
  if (!keys.length) return [...rows].sort((a, b) => a.id - b.id);
  return [...rows].sort((a, b) => {
    for (const key of [...keys, "id"]) {
      const desc = key.startsWith("-");
      const f = key.replace(/^-/, "");
      const x = (a as unknown as Record<string, unknown>)[f];
      const y = (b as unknown as Record<string, unknown>)[f];
      const c = x === y ? 0 : x == null ? -1 : y == null ? 1 : (x as number | string) < (y as number | string) ? -1 : 1;
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  });
}

/** One page of `rows` (already filtered and ordered) for the request's `limit` and `offset`. */
export function paginate<T>(
  rows: T[],
  base: string,
  url: URL,
): { count: number; next: string | null; previous: string | null; page: T[] } {
  // OptionalLimitOffsetPagination.get_limit()/LimitOffsetPagination.get_offset().
  const rawLimit = url.searchParams.get("limit");
  let limit = Math.min(PAGINATE_COUNT, MAX_PAGE_SIZE);
  if (rawLimit !== null) {
    const n = /^\d+$/.test(rawLimit.trim()) ? Number(rawLimit) : NaN;
    if (Number.isInteger(n) && n >= 0) limit = n === 0 ? MAX_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE);
  }
  const rawOffset = url.searchParams.get("offset");
  const offset = rawOffset !== null && /^\d+$/.test(rawOffset.trim()) ? Number(rawOffset) : 0;
  const count = rows.length;
  const page = count === 0 || offset > count ? [] : rows.slice(offset, offset + limit);
  const next =
    offset + limit < count ? pageLink(base, url.pathname, url.searchParams, { limit, offset: offset + limit }) : null;
  const previous =
    offset <= 0
      ? null
      : offset - limit <= 0
        ? pageLink(base, url.pathname, url.searchParams, { limit, offset: undefined })
        : pageLink(base, url.pathname, url.searchParams, { limit, offset: offset - limit });
  return { count, next, previous, page };
}

/** DRF's replace_query_param/remove_query_param: re-encode with sorted keys. */
function pageLink(
  base: string,
  pathname: string,
  query: URLSearchParams,
  set: Record<string, number | undefined>,
): string {
  const grouped = new Map<string, string[]>();
  for (const [k, v] of query) grouped.set(k, [...(grouped.get(k) ?? []), v]);
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) grouped.delete(k);
    else grouped.set(k, [String(v)]);
  }
  const qs = new URLSearchParams();
  for (const k of [...grouped.keys()].sort()) for (const v of grouped.get(k)!) qs.append(k, v);
  return `${base}${pathname}?${qs.toString()}`;
}
