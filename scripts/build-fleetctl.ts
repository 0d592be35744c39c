/**
 * The CLI's build (part of `npm run build`, of `npm pack -w apps/fleetctl`, and used by its
 * start-up benchmark): one ES module `apps/fleetctl/dist/fleetctl.js`, runnable directly, with
 * each command in a chunk beside it that is loaded only when that command runs. Unlike the hub's,
 * it bundles its npm packages too: the packed tarball then installs and runs on a machine without
 * the repository and without a registry (the CLI's packages are all plain JavaScript).
 */
import { chmod } from "node:fs/promises";
import { join } from "node:path";
import { build, type Plugin } from "esbuild";

const ROOT = new URL("..", import.meta.url).pathname;
export const FLEETCTL_DIST = join(ROOT, "apps/fleetctl/dist");
export const FLEETCTL_BUILT = join(FLEETCTL_DIST, "fleetctl.js");

/** Node's own modules stay imports; everything else is bundled. */
const nodeBuiltinsExternal: Plugin = {
  name: "node-builtins-external",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, external: true }));
  },
};

/** Builds into `outdir` (default apps/fleetctl/dist); its entry's path. */
export async function buildFleetctl(outdir = FLEETCTL_DIST): Promise<string> {
  await build({
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    splitting: true,
    chunkNames: "[name]-[hash]",
    plugins: [nodeBuiltinsExternal],
    logLevel: "warning",
    entryPoints: { fleetctl: join(ROOT, "apps/fleetctl/src/main.ts") },
    outdir,
    // CommonJS packages (commander, cli-table3) call require() for Node's modules.
    banner: {
      js: '#!/usr/bin/env node\nimport { createRequire as __fleetctlRequire } from "node:module";\nconst require = __fleetctlRequire(import.meta.url);',
    },
  });
  const entry = join(outdir, "fleetctl.js");
  await chmod(entry, 0o755);
  return entry;
}

// `tsx scripts/build-fleetctl.ts`: the package's prepack.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await buildFleetctl());
