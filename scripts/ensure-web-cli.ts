/**
 * Run by `npm start` before the hub: builds the web UI into the directory the hub will serve
 * (FM_WEB_DIR, or apps/web/dist) when it is missing or older than its sources, so a fresh
 * checkout's first `npm start` serves /ui/ (a production image carries its build and never runs
 * this). The built, hashed and precompressed assets are the same `npm run build` writes.
 */
import { resolve } from "node:path";
import { WEB_DIST, ensureWebBuilt } from "./build-web.ts";

const dir = process.env.FM_WEB_DIR ? resolve(process.env.FM_WEB_DIR) : WEB_DIST;
const started = performance.now();
const say = (msg: string) =>
  process.stderr.write(`${JSON.stringify({ level: "INFO", time: new Date().toISOString(), msg })}\n`);
say(`web UI: checking the build in ${dir} against apps/web's sources`);
try {
  const was = await ensureWebBuilt(dir);
  const s = ((performance.now() - started) / 1000).toFixed(1);
  say(
    was === "current"
      ? `web UI: the build in ${dir} is current, served as it is`
      : `web UI: the build in ${dir} was ${was === "missing" ? "missing" : "older than its sources"}: built it in ${s} s`,
  );
} catch (err) {
  say(`web UI: building it into ${dir} failed (${(err as Error).message}); the hub starts without it`);
}
