/**
 * Ironic's marker pagination, for nodes and ports alike: each page is asked for with the marker
 * of the last one. The marker comes from `next` (only its `marker` parameter: behind a proxy or
 * TLS terminator Ironic builds that URL from its own view of the host), else from the page's
 * last item; a full page without `next` (some proxies drop it) is followed too. A marker seen
 * before means the pages do not advance: that stops with an IronicApiError (the status and body
 * of the page that repeated it) instead of looping.
 */
import { IronicApiError } from "./ironic-errors.ts";

/** One page as the pager needs it: its items, Ironic's `next`, and the answer it came in. */
export interface MarkerPage<T> {
  items: readonly T[];
  next?: string | undefined;
  /** The HTTP status of the answer (kept on the error when the pages do not advance). */
  status: number;
  /** The response body as received (kept on the error likewise). */
  text: string;
}

export interface MarkerPagerOptions<T> {
  /** The list's path (`/v1/nodes`, `/v1/ports`), named in the error. */
  path: string;
  /** The page size asked for: a page this full may have a next one. */
  limit: number;
  /** One page after `marker` (undefined: the first). */
  page(marker: string | undefined): Promise<MarkerPage<T>>;
  /** The marker naming an item (Ironic's UUID). */
  markerOf(item: T): string | undefined;
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
    if (seen.has(next)) {
      throw new IronicApiError(
        page.status,
        page.text,
        `GET ${o.path}: pagination does not advance (marker ${next} repeated)`,
      );
    }
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
