/**
 * The operators' web UI, built by Vite from apps/web (its vite.config.ts) into apps/web/dist,
 * which the hub serves at /ui/. Also run alone by the web benchmark and the browser tests'
 * global setup when the build is missing or older than the sources.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { build } from "vite";

const ROOT = new URL("..", import.meta.url).pathname;
export const WEB_ROOT = join(ROOT, "apps/web");
export const WEB_DIST = join(WEB_ROOT, "dist");

export async function buildWeb(): Promise<void> {
  // Vite and its React plugin pick production output (React's production build, the plain JSX
  // runtime) from NODE_ENV, which a test runner sets to "test": production for the build's length.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: join(WEB_ROOT, "vite.config.ts"), logLevel: "warn" });
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

/** Builds the UI unless apps/web/dist is newer than every source it is built from. */
export async function ensureWebBuilt(): Promise<void> {
  const built = await stat(join(WEB_DIST, "index.html")).catch(() => undefined);
  if (built && built.mtimeMs > (await newestSource())) return;
  await buildWeb();
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
