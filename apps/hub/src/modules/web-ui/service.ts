/**
 * The operators' web UI as the hub serves it: the files `npm run build` writes to apps/web/dist,
 * read from disk on each request (the dist is small, and a rebuild shows without a restart), and
 * the headers that make a browser cache and run them safely.
 *
 * Caching: Vite names every asset by its content hash, so `assets/*` may be cached forever
 * (`immutable`); index.html names the current hashes and must be revalidated every time.
 * Content Security Policy: scripts and styles from the hub only (the build emits no inline
 * script), and fetch() to the hub only: the hub logs people in (modules/web-session), so the
 * page never talks to the issuer itself.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { browserPageHeaders } from "../../lib/browser-headers.ts";

export interface WebUiConfig {
  /** The built SPA (apps/web/dist). */
  dir: string;
  /** The people's OIDC issuer (FM_OIDC_ISSUER); unset: the UI says people cannot log in here. */
  issuer: string | undefined;
  /** The public OAuth client the UI logs people in as, registered at the issuer. */
  clientId: string;
}

/** What the SPA reads at start (GET /ui/config.json): where and as whom to log people in. */
export interface WebUiClientConfig {
  issuer: string | null;
  clientId: string;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
};

/** Asset names as Vite writes them (`index-C0ffee12.js`): nothing that could climb out of the folder. */
// At most 100 characters: Fastify's maxParamLength, beyond which /ui/assets/:name never matches.
const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

export interface WebFile {
  body: Buffer;
  type: string;
  /** `br` or `gzip` when the body is a precompressed variant the build wrote beside the asset. */
  encoding?: "br" | "gzip";
}

/** The precompressed variants the build writes, best first, with their file suffixes. */
const VARIANTS = [
  ["br", ".br"],
  ["gzip", ".gz"],
] as const;

/**
 * The codings an Accept-Encoding header accepts (RFC 9110 §12.5.3): listed with q > 0, or
 * covered by `*` with q > 0 and not listed with q=0. `identity` is always acceptable here.
 */
export function acceptedEncodings(header: string | undefined): Set<string> {
  const listed = new Map<string, number>();
  for (const part of (header ?? "").split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (!coding) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const value = q ? Number(q.slice(2)) : 1;
    listed.set(coding, Number.isFinite(value) ? value : 0);
  }
  const star = listed.get("*");
  const ok = new Set<string>();
  for (const [coding] of VARIANTS) {
    const q = listed.get(coding) ?? (coding === "gzip" ? listed.get("x-gzip") : undefined) ?? star;
    if (q !== undefined && q > 0) ok.add(coding);
  }
  return ok;
}

export function createWebUiService(config: WebUiConfig) {
  async function read(path: string): Promise<WebFile | undefined> {
    try {
      const body = await readFile(path);
      return { body, type: TYPES[extname(path)] ?? "application/octet-stream" };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "EISDIR")
        return undefined;
      throw err;
    }
  }
  return {
    headers: browserPageHeaders(),
    clientConfig: (): WebUiClientConfig => ({ issuer: config.issuer ?? null, clientId: config.clientId }),
    /** index.html, or undefined when the UI has not been built. */
    index: () => read(join(config.dir, "index.html")),
    /**
     * A hashed asset, or undefined; its precompressed variant when the build wrote one the
     * browser accepts (`acceptEncoding`: the request's header), brotli before gzip.
     */
    async asset(name: string, acceptEncoding?: string): Promise<WebFile | undefined> {
      // A variant is sent for its asset, never asked for by name.
      if (!ASSET_NAME.test(name) || /\.(br|gz)$/.test(name)) return undefined;
      const path = join(config.dir, "assets", name);
      const accepted = acceptedEncodings(acceptEncoding);
      for (const [encoding, suffix] of VARIANTS) {
        if (!accepted.has(encoding)) continue;
        const variant = await read(path + suffix);
        if (variant) return { body: variant.body, type: TYPES[extname(path)] ?? "application/octet-stream", encoding };
      }
      return read(path);
    },
    /** Whether the UI is built (for the log line at start). */
    built: async () => (await stat(join(config.dir, "index.html")).catch(() => undefined))?.isFile() ?? false,
  };
}
export type WebUiService = ReturnType<typeof createWebUiService>;
