/**
 * The operators' web UI, built by Vite from apps/web (its vite.config.ts) into apps/web/dist,
 * which the hub serves at /ui/. Also run alone by `npm start` (scripts/ensure-web-cli.ts), the
 * web benchmark and the browser tests' global setup when the build is missing or older than the
 * sources. Every asset is also written precompressed (`<name>.br`, `<name>.gz`, at the highest
 * levels: once per build, not per request) for the hub to send by the browser's Accept-Encoding.
 */
import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { build } from "vite";

const ROOT = new URL("..", import.meta.url).pathname;
export const WEB_ROOT = join(ROOT, "apps/web");
export const WEB_DIST = join(WEB_ROOT, "dist");

/** Asset types worth compressing (the rest, images and fonts, are compressed already). */
const COMPRESSIBLE = /\.(js|css|html|svg|json|map)$/;

/** Writes `<file>.br` and `<file>.gz` beside each compressible asset under `dir`/assets. */
export async function precompress(dir: string): Promise<void> {
  const assets = join(dir, "assets");
  for (const name of await readdir(assets)) {
    if (!COMPRESSIBLE.test(name)) continue;
    const body = readFileSync(join(assets, name));
    await writeFile(
      join(assets, `${name}.br`),
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    );
    await writeFile(join(assets, `${name}.gz`), gzipSync(body, { level: 9 }));
  }
}

export async function buildWeb(outDir: string = WEB_DIST): Promise<void> {
  // Vite and its React plugin pick production output (React's production build, the plain JSX
  // runtime) from NODE_ENV, which a test runner sets to "test": production for the build's length.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: join(WEB_ROOT, "vite.config.ts"), logLevel: "warn", build: { outDir } });
    await precompress(outDir);
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

/** Newest modification time under the UI's sources and the domain package it imports (ms). */
async function newestSource(): Promise<number> {
  let newest = 0;
  for (const dir of [join(WEB_ROOT, "src"), join(ROOT, "packages/domain/src")])
    for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
      if (e.isFile()) newest = Math.max(newest, (await stat(join(e.parentPath, e.name))).mtimeMs);
  for (const f of ["index.html", "vite.config.ts"]) newest = Math.max(newest, (await stat(join(WEB_ROOT, f))).mtimeMs);
  return newest;
}

/**
 * Builds the UI into `outDir` unless it holds a build newer than every source it is built from.
 * Says which it was: "missing", "stale" (built, then rebuilt) or "current" (left as it is).
 */
export async function ensureWebBuilt(outDir: string = WEB_DIST): Promise<"missing" | "stale" | "current"> {
  const built = await stat(join(outDir, "index.html")).catch(() => undefined);
  if (built && built.mtimeMs > (await newestSource())) return "current";
  await buildWeb(outDir);
  return built ? "stale" : "missing";
}

/** Bytes of the JavaScript and CSS a first visit downloads, raw and gzip-compressed (level 9, as a server would). */
export async function bundleSize(): Promise<{ files: number; raw: number; gzip: number }> {
  let raw = 0;
  let gzip = 0;
  let files = 0;
  for (const name of await readdir(join(WEB_DIST, "assets"))) {
    if (!/\.(js|css)$/.test(name)) continue;
    const body = readFileSync(join(WEB_DIST, "assets", name));
    files++;
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
  }
  return { files, raw, gzip };
}
