import { encodeCursor } from "@fm/domain";

/**
 * A list page from `limit + 1` rows in id order (the extra row only says whether another page
 * follows) and the exact count: the contract's `{items, count, nextCursor}`.
 */
export function keysetPage<R extends { id: string }, T>(
  rows: R[],
  count: number,
  limit: number,
  present: (row: R) => T,
): { items: T[]; count: number; nextCursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { items: page.map(present), count, nextCursor: more ? encodeCursor(page[page.length - 1]!.id) : null };
}
