/** fleetctl's version, from its package.json at build time (esbuild inlines the JSON). */
import pkg from "../package.json" with { type: "json" };
export const VERSION: string = (pkg as { version?: string }).version ?? "0.0.0";
