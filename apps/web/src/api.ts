/**
 * Calls to the hub's /api/v1 as the logged-in person: the browser sends the session cookie (the
 * hub holds the tokens), and every call says it comes from the UI (WEB_CSRF_HEADER). A
 * problem+json answer becomes an ApiError carrying the hub's own `code` and `detail`, which the
 * views show as they are; a 401 means the session is over, and the login page shows.
 */
import { WEB_CSRF_HEADER } from "@fm/domain";
import { sessionEnded } from "./auth.ts";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly detail: string,
    readonly errors: { path?: string; message: string }[] = [],
  ) {
    super(detail);
  }
}

/**
 * The hub did not answer: the connection failed, or no answer came within REQUEST_TIMEOUT_MS.
 * The shell shows a banner for it (see `hubReachable`) instead of the browser's "Failed to fetch".
 */
export class HubUnreachable extends Error {
  constructor(readonly method: string) {
    super(
      method === "GET"
        ? "The hub cannot be reached."
        : "The hub did not answer: check whether the change was made before trying it again.",
    );
  }
}

/** How long a call waits for the hub before it counts as unreachable (ms). */
export const REQUEST_TIMEOUT_MS = 10_000;
/** How often the UI asks the hub's /healthz while it cannot be reached (ms). */
export const PROBE_MS = 3_000;

let reachable = true;
let probing: ReturnType<typeof setInterval> | undefined;
const reachabilityListeners = new Set<() => void>();

/** Whether the hub answered the last call (for useSyncExternalStore). */
export const hubReachable = () => reachable;
export function onReachabilityChange(cb: () => void): () => void {
  reachabilityListeners.add(cb);
  return () => {
    reachabilityListeners.delete(cb);
  };
}
function setReachable(now: boolean): void {
  if (now === reachable) return;
  reachable = now;
  if (now) {
    clearInterval(probing);
    probing = undefined;
  } else probing ??= setInterval(() => void probeHub(), PROBE_MS);
  for (const cb of reachabilityListeners) cb();
}

/** Asks the hub's liveness endpoint once; any answer means the hub is back. */
export async function probeHub(): Promise<boolean> {
  try {
    await fetch("/healthz", { cache: "no-store", signal: AbortSignal.timeout(PROBE_MS) });
    setReachable(true);
  } catch {
    setReachable(false);
  }
  return reachable;
}

interface Options {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function once(path: string, o: Options): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json", [WEB_CSRF_HEADER]: "1", ...o.headers };
  if (o.body !== undefined) headers["content-type"] = "application/json";
  const method = o.method ?? "GET";
  try {
    const res = await fetch(path, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      credentials: "same-origin",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    setReachable(true);
    return res;
  } catch {
    // fetch rejects only when no answer came (refused, reset, timed out): a hub answer, even a 5xx, resolves.
    setReachable(false);
    throw new HubUnreachable(method);
  }
}

export async function apiRaw(path: string, o: Options = {}): Promise<{ body: unknown; etag: string | null }> {
  const res = await once(path, o);
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const p = (body ?? {}) as {
      code?: string;
      detail?: string;
      title?: string;
      errors?: { path?: string; message: string }[];
    };
    const error = new ApiError(res.status, p.code, p.detail ?? p.title ?? `HTTP ${res.status}`, p.errors ?? []);
    if (res.status === 401) sessionEnded(error.code, error.detail);
    throw error;
  }
  return { body, etag: res.headers.get("etag") };
}

export const api = async <T>(path: string, o: Options = {}): Promise<T> => (await apiRaw(path, o)).body as T;

/** A query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}
