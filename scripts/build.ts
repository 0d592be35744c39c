/**
 * `npm run build`: every process compiled to JavaScript that plain `node` runs, without tsx.
 *
 *   apps/hub/dist/main.js               the hub                        (node apps/hub/dist/main.js)
 *   apps/hub/dist/migrate.js            npm run db:migrate
 *   apps/hub/dist/seed-demo.js          npm run seed:demo
 *   apps/hub/dist/migrations/           the SQL migrations the hub applies at start
 *   apps/hub/dist/query_compiler_*.wasm Prisma's query compiler, read by the built client (prismaWasmFile)
 *   apps/satellite-agents/dist/main.js  every agent and the Temporal worker (node …/main.js <name>)
 *   apps/satellite-agents/dist/netbox-check.js   npm run netbox:check
 *   apps/satellite-agents/dist/workflow-bundle.js  the job workflows, bundled for Temporal's sandbox
 *   apps/connectors/dist/main.js        a connector instance            (node apps/connectors/dist/main.js)
 *   apps/connectors/dist/check.js       npm run connector:check
 *   apps/connectors/dist/migrations/    the connector database's SQL migrations
 *   apps/fleetctl/dist/fleetctl.js      the CLI (node apps/fleetctl/dist/fleetctl.js, or run it directly)
 *   apps/web/dist/                      the operators' web UI (Vite), which the hub serves at /ui/
 *
 * esbuild bundles each app's own code and the workspace packages (@fm/*, whose exports point at
 * TypeScript sources) into ES modules; every npm package stays an import resolved from
 * node_modules at run time, so native and data-carrying packages (Temporal's core bridge,
 * Prisma's query compiler, embedded PostgreSQL, Swagger UI's assets) load as they do from source.
 * Chunks sit beside their entry, so paths a module derives from import.meta.url (migrations,
 * workflow bundle) are relative to dist/. The agents' bundle is split so a process loads only its
 * own agent: the worker's Temporal native core is not loaded by the other agents.
 *
 * The Temporal worker runs the workflows from workflow-bundle.js, built here with the SDK's own
 * bundler (bundleWorkflowCode) from the same sources the worker bundles at start when it runs
 * from source: a built worker starts without webpack and without the workflow sources.
 */
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build, type BuildOptions, type Plugin } from "esbuild";
import { bundleWorkflowCode } from "@temporalio/worker";
import { WORKFLOW_BUNDLE_FILE, workflowsPath } from "../apps/satellite-agents/src/temporal-worker/workflow-bundle.ts";
import { MIGRATIONS_DIR } from "../apps/hub/src/db/migrate.ts";
import { CONNECTOR_MIGRATIONS_DIR } from "../apps/connectors/src/queue/migrate.ts";
import { FLEETCTL_DIST, buildFleetctl } from "./build-fleetctl.ts";
import { WEB_DIST, buildWeb } from "./build-web.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const HUB_DIST = join(ROOT, "apps/hub/dist");
const AGENTS_DIST = join(ROOT, "apps/satellite-agents/dist");
const CONNECTORS_DIST = join(ROOT, "apps/connectors/dist");

/** Bundle our code and the workspace packages; leave every other bare import to node_modules. */
const npmPackagesExternal: Plugin = {
  name: "npm-packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@fm/") ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Prisma's generated client loads its query compiler from a module holding the WebAssembly as a
 * 4.4 MB base64 string, which then stays in the heap twice for the life of the process (the
 * module's source and the string). The built hub reads the same bytes from a .wasm file written
 * beside its chunks instead; the build fails if the generated code no longer has that shape.
 */
const PRISMA_WASM_IMPORT =
  /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/([\w.]+)\.wasm-base64\.mjs)"\)\s*return await decodeBase64AsWasm\(wasm\)/;
function prismaWasmFile(outdir: string): Plugin {
  return {
    name: "prisma-wasm-file",
    setup(b) {
      b.onLoad({ filter: /generated[\\/]prisma[\\/]internal[\\/]class\.ts$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        const found = PRISMA_WASM_IMPORT.exec(source);
        if (!found)
          throw new Error(`${args.path}: Prisma's query compiler import has changed shape; update PRISMA_WASM_IMPORT`);
        const [snippet, specifier, name] = found;
        const { wasm } = (await import(specifier!)) as { wasm: string };
        await writeFile(join(outdir, `${name}.wasm`), Buffer.from(wasm, "base64"));
        const replacement =
          `const { readFile } = await import("node:fs/promises")\n` +
          `    return new WebAssembly.Module(await readFile(new URL("./${name}.wasm", import.meta.url)))`;
        return { contents: source.replace(snippet, replacement), loader: "ts" };
      });
    },
  };
}

const common: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  splitting: true,
  chunkNames: "[name]-[hash]",
  plugins: [npmPackagesExternal],
  logLevel: "warning",
};

async function buildHub() {
  await build({
    ...common,
    entryPoints: {
      main: join(ROOT, "apps/hub/src/main.ts"),
      migrate: join(ROOT, "apps/hub/src/db/migrate-cli.ts"),
      "seed-demo": join(ROOT, "apps/hub/src/seed/demo-cli.ts"),
    },
    outdir: HUB_DIST,
    plugins: [npmPackagesExternal, prismaWasmFile(HUB_DIST)],
  });
  await cp(MIGRATIONS_DIR, join(HUB_DIST, "migrations"), { recursive: true });
}

async function buildAgents() {
  await build({
    ...common,
    entryPoints: {
      main: join(ROOT, "apps/satellite-agents/src/main.ts"),
      "netbox-check": join(ROOT, "apps/satellite-agents/src/netbox-agent/check-cli.ts"),
    },
    outdir: AGENTS_DIST,
  });
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  await writeFile(join(AGENTS_DIST, WORKFLOW_BUNDLE_FILE), code);
}

async function buildConnectors() {
  await build({
    ...common,
    entryPoints: {
      main: join(ROOT, "apps/connectors/src/main.ts"),
      check: join(ROOT, "apps/connectors/src/check-cli.ts"),
    },
    outdir: CONNECTORS_DIST,
  });
  await cp(CONNECTOR_MIGRATIONS_DIR, join(CONNECTORS_DIST, "migrations"), { recursive: true });
}

/** The SDK's bundler logs every webpack step at info; keep its warnings and errors. */
const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  return total;
}

const t0 = performance.now();
await Promise.all(
  [HUB_DIST, AGENTS_DIST, CONNECTORS_DIST, FLEETCTL_DIST, WEB_DIST].map((d) => rm(d, { recursive: true, force: true })),
);
await mkdir(HUB_DIST, { recursive: true });
await Promise.all([buildHub(), buildAgents(), buildConnectors(), buildFleetctl(), buildWeb()]);
const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
console.log(
  `build: apps/hub/dist (${mib(await sizeOf(HUB_DIST))}) and apps/satellite-agents/dist ` +
    `(${mib(await sizeOf(AGENTS_DIST))}) and apps/connectors/dist (${mib(await sizeOf(CONNECTORS_DIST))}) ` +
    `and apps/fleetctl/dist (${mib(await sizeOf(FLEETCTL_DIST))}) and apps/web/dist (${mib(await sizeOf(WEB_DIST))}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
