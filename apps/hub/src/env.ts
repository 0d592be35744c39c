import { resolve } from "node:path";
import { z } from "zod";

const bool = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1");

/** The hub's environment, parsed once at start. Each variable: what it is, and its unit. */
export const EnvSchema = z.object({
  /** PostgreSQL URL. Unset: an embedded PostgreSQL is started in FM_DATA_DIR. */
  DATABASE_URL: z.string().url().optional(),
  /** TCP port the API listens on. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Address the API listens on (0.0.0.0 in a container). */
  HOST: z.string().min(1).default("127.0.0.1"),
  /** Folder for the embedded database and generated local secrets. */
  FM_DATA_DIR: z.string().min(1).default(".data"),
  /** Largest accepted request body, bytes (reflection pushes need several MiB). */
  FM_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(16 * 1024 * 1024),
  /** Connections in the hub's PostgreSQL pool. */
  FM_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** How long /readyz waits for the database before answering 503, milliseconds. */
  FM_READINESS_TIMEOUT_MS: z.coerce.number().int().min(50).default(1000),
  /** Longest a graceful shutdown may take before the process exits anyway, milliseconds. */
  FM_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Apply pending SQL migrations at start (under an advisory lock). */
  FM_MIGRATE_ON_START: bool.default(true),
  /** A source that has not observed a device for this long makes it STALE, seconds (runbook: 10 min). */
  FM_STALE_AFTER_S: z.coerce.number().int().min(10).default(600),
  /** Serve /docs (Swagger UI). /openapi.json is always served. */
  FM_DOCS_ENABLED: bool.default(true),
  /** pino log level. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type Env = z.infer<typeof EnvSchema>;

export class EnvError extends Error {}

/** Parses the environment; a bad value throws an EnvError naming every offending variable. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const result = EnvSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`invalid environment:\n${lines.join("\n")}`);
  }
  return { ...result.data, FM_DATA_DIR: resolve(result.data.FM_DATA_DIR) };
}
