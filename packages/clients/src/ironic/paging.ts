/**
 * Ironic's marker pagination, for nodes and ports alike: each page is asked for with the marker
 * of the last one. The marker comes from `next` (only its `marker` parameter: behind a proxy or
 * TLS terminator Ironic builds that URL from its own view of the host), else from the page's
 * last item; a full page without `next` (some proxies drop it) is followed too. A marker seen
 * before means the pages do not advance: that stops with `repeated`'s error instead of looping.
 */
export interface MarkerPagerOptions<T> {
  /** The page size asked for: a page this full may have a next one. */
  limit: number;
  /** One page after `marker` (undefined: the first). */
  page(marker: string | undefined): Promise<{ items: readonly T[]; next?: string | undefined }>;
  /** The marker naming an item (Ironic's UUID). */
  markerOf(item: T): string | undefined;
  /** The error when a marker comes back. */
  repeated(marker: string): Error;
}

export async function pageByMarker<T>(o: MarkerPagerOptions<T>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let marker: string | undefined;
  for (;;) {
    const page = await o.page(marker);
    items.push(...page.items);
    const next = nextMarker(page, o.limit, o.markerOf);
    if (next === undefined) return items;
    if (seen.has(next)) throw o.repeated(next);
    seen.add(next);
    marker = next;
  }
}

function nextMarker<T>(
  page: { items: readonly T[]; next?: string | undefined },
  limit: number,
  markerOf: (item: T) => string | undefined,
): string | undefined {
  if (page.items.length === 0) return undefined;
  const last = markerOf(page.items.at(-1)!);
  if (page.next) return new URL(page.next, "http://ironic.invalid").searchParams.get("marker") ?? last;
  return page.items.length >= limit ? last : undefined;
}
