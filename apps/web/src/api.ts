/**
 * Calls to the hub's /api/v1 with the person's token. A problem+json answer becomes an ApiError
 * carrying the hub's own `code` and `detail`, which the views show as they are.
 */
import { accessToken, refresh } from "./auth.ts";

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

interface Options {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function once(path: string, o: Options): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json", ...o.headers };
  const token = accessToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  return fetch(path, {
    method: o.method ?? "GET",
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
}

export async function apiRaw(path: string, o: Options = {}): Promise<{ body: unknown; etag: string | null }> {
  let res = await once(path, o);
  // An expired token: renew once and repeat (every call the UI makes is safe to repeat after a 401).
  if (res.status === 401 && (await refresh())) res = await once(path, o);
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const p = (body ?? {}) as {
      code?: string;
      detail?: string;
      title?: string;
      errors?: { path?: string; message: string }[];
    };
    throw new ApiError(res.status, p.code, p.detail ?? p.title ?? `HTTP ${res.status}`, p.errors ?? []);
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
