/**
 * The one keyset list query every list route runs: the rows after the cursor's id, in id
 * order (ascending by default; descending for the lists people read newest first, which
 * then start below the cursor's id), one more than the page size (the extra row only says whether another page follows),
 * and the exact count of every row matching the filter. The two run in parallel on two pooled
 * connections (a transaction would serialise them on one); the count is exact as of its own
 * statement. `lib/paging.ts` turns the result into the contract's `{items, count, nextCursor}`.
 */

/** Which way a list runs through its ids (uuid v7 and sequence ids grow with time). */
export type PageOrder = "asc" | "desc";

/** Where a page starts (after this id in the list's order, or at the beginning) and how many rows it holds. */
export interface PageRequest<K = string> {
  afterId: K | undefined;
  limit: number;
  /** Ascending unless said otherwise. */
  order?: PageOrder | undefined;
}

/** Up to `limit + 1` rows in id order, and the total number of rows matching. */
export interface RowPage<R> {
  rows: R[];
  count: number;
}

/** The two queries of a model (a Prisma delegate, or closures adding `include`/`select`). */
export interface KeysetSource<W, R> {
  findMany(args: { where: W; orderBy: { id: PageOrder }; take: number }): PromiseLike<R[]>;
  count(args: { where: W }): PromiseLike<number>;
}

export async function keysetRows<W extends object, R, K = string>(
  source: KeysetSource<W, R>,
  where: W,
  page: PageRequest<K>,
): Promise<RowPage<R>> {
  // Every Prisma where-input has AND and id; W stays the caller's type.
  const order = page.order ?? "asc";
  const beyond = order === "asc" ? { gt: page.afterId } : { lt: page.afterId };
  const after = page.afterId === undefined ? where : ({ AND: [where, { id: beyond }] } as W);
  const [rows, count] = await Promise.all([
    source.findMany({ where: after, orderBy: { id: order }, take: page.limit + 1 }),
    source.count({ where }),
  ]);
  return { rows, count };
}

/**
 * keysetRows for a list ordered by a field before its id (a sorted device list): the caller
 * gives the ORDER BY and the condition selecting the rows after the cursor in that order.
 */
export interface OrderedPage<W, O> {
  /** The rows after the cursor, in the list's order; undefined on the first page. */
  after: W | undefined;
  orderBy: O;
  limit: number;
}

export async function orderedKeysetRows<W extends object, R, O>(
  source: {
    findMany(args: { where: W; orderBy: O; take: number }): PromiseLike<R[]>;
    count(args: { where: W }): PromiseLike<number>;
  },
  where: W,
  page: OrderedPage<W, O>,
): Promise<RowPage<R>> {
  const beyond = page.after === undefined ? where : ({ AND: [where, page.after] } as W);
  const [rows, count] = await Promise.all([
    source.findMany({ where: beyond, orderBy: page.orderBy, take: page.limit + 1 }),
    source.count({ where }),
  ]);
  return { rows, count };
}
