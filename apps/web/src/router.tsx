/**
 * The UI's routes under /ui/, in the browser's history: a link is a real URL (open in a new tab,
 * share it), and a view's filters live in its query string.
 */
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

const subscribe = (cb: () => void) => {
  window.addEventListener("popstate", cb);
  return () => window.removeEventListener("popstate", cb);
};
const snapshot = () => location.pathname + location.search;

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** The current path (below /ui) and query. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, location.origin);
  return { path: url.pathname.replace(/^\/ui/, "") || "/", search: url.searchParams };
}

/** Sets the query string without a new history entry per keystroke. */
export function setSearch(params: URLSearchParams, opts: { replace?: boolean } = {}): void {
  const s = params.toString();
  navigate(`${location.pathname}${s ? `?${s}` : ""}`, opts);
}

/**
 * A link that navigates inside the app. The caller's onClick runs first; a caller that calls
 * preventDefault() itself has handled the click, otherwise the link navigates.
 */
export function Link({ to, onClick, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented) return;
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} {...rest} onClick={handle} />;
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Fleet Manager`;
  }, [title]);
}
