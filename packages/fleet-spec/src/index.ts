/**
 * @fm/fleet-spec: the fleet spec (npa.fleet/v0.0.1) as a library. Pure functions, no I/O:
 * parse and validate (load.ts), defaults (merge.ts), the resolution rules (resolve.ts), the
 * tenant (identity.ts), the plan (plan.ts), quota demand (quotas.ts), the preflight verdict
 * (preflight.ts) and the JSON shapes (output.ts). Gathering evidence from files or the nebius
 * CLI is Node-only: `@fm/fleet-spec/evidence`.
 */
export * from "./spec.ts";
export * from "./merge.ts";
export * from "./load.ts";
export * from "./presets.ts";
export * from "./resolve.ts";
export * from "./identity.ts";
export * from "./plan.ts";
export * from "./quotas.ts";
export * from "./provider.ts";
export * from "./preflight.ts";
export * from "./output.ts";
