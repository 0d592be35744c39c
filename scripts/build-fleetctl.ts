/**
 * The CLI's build (part of `npm run build`, and used by its start-up benchmark): one ES module
 * `apps/fleetctl/dist/fleetctl.js`, runnable directly, with each command in a chunk beside it
 * that is loaded only when that command runs. npm packages stay imports resolved from
 * node_modules, as for the hub and the agents.
 */
import { chmod } from "node:fs/promises";
import { join } from "node:path";
import { build, type Plugin } from "esbuild";

const ROOT = new URL("..", import.meta.url).pathname;
export const FLEETCTL_DIST = join(ROOT, "apps/fleetctl/dist");
export const FLEETCTL_BUILT = join(FLEETCTL_DIST, "fleetctl.js");

const npmPackagesExternal: Plugin = {
  name: "npm-packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@fm/") ? undefined : { path: args.path, external: true },
    );
  },
};

/** Builds into `outdir` (default apps/fleetctl/dist, which must sit where node_modules can be found); its entry's path. */
export async function buildFleetctl(outdir = FLEETCTL_DIST): Promise<string> {
  await build({
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    splitting: true,
    chunkNames: "[name]-[hash]",
    plugins: [npmPackagesExternal],
    logLevel: "warning",
    entryPoints: { fleetctl: join(ROOT, "apps/fleetctl/src/main.ts") },
    outdir,
    banner: { js: "#!/usr/bin/env node" },
  });
  const entry = join(outdir, "fleetctl.js");
  await chmod(entry, 0o755);
  return entry;
}
