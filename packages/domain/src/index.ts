export * from "./errors.ts";
export * from "./problem.ts";
export * from "./common.ts";
export * from "./cursor.ts";
export * from "./sites.ts";
