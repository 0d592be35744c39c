import { decodeCursor, encodeCursor } from "@fm/domain";
import type { PageOrder, PageRequest, RowPage } from "../db/keyset.ts";

/** The contract's list: one page of items, the exact count, and the cursor of the next page. */
export interface List<T> {
  items: T[];
  count: number;
  nextCursor: string | null;
}

/** A list query's paging parameters (`?limit=&cursor=`, and `&order=` where the list offers it). */
export interface PageQuery {
  limit: number;
  cursor?: string | undefined;
  order?: PageOrder | undefined;
}

/** How a list's cursor names the last row seen: UUIDs by default, sequence numbers for history. */
export interface CursorCodec<K> {
  decode(cursor: string): K;
  encode(lastId: K): string;
}
const uuidCursor: CursorCodec<string> = { decode: decodeCursor, encode: encodeCursor };

/**
 * One page of a keyset list: decodes the cursor, fetches the rows after it (the repo runs
 * `keysetRows`), and maps the page's rows to their representation.
 */
export async function keysetList<R extends { id: K }, T, K = string>(
  query: PageQuery,
  fetch: (page: PageRequest<K>) => Promise<RowPage<R>>,
  toItem: (row: R) => T,
  cursor: CursorCodec<K> = uuidCursor as unknown as CursorCodec<K>,
): Promise<List<T>> {
  const { rows, count } = await fetch({
    afterId: query.cursor ? cursor.decode(query.cursor) : undefined,
    limit: query.limit,
    order: query.order,
  });
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  return { items: page.map(toItem), count, nextCursor: more ? cursor.encode(page[page.length - 1]!.id) : null };
}
