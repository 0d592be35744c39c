/**
 * The configuration every agent shares (contract: "Agent configuration"), parsed with zod so a
 * bad value stops the process at start with every offending variable named, instead of
 * surfacing as a confusing failure an hour later. Each agent extends it with its own source's
 * settings through `loadConfig(extra)`.
 */
import { z } from "zod";
import { AGENT_KINDS, Slug, type AgentKind } from "@fm/domain";

const seconds = (def: number) => z.coerce.number().positive().default(def);
const int = (def: number, min = 1) => z.coerce.number().int().min(min).default(def);

export const CommonConfigSchema = z.object({
  FM_HUB_URL: z
    .url()
    .transform((u) => u.replace(/\/+$/, ""))
    .describe("Hub base URL"),
  FM_CLIENT_ID: z.string().min(1).describe("This agent's OAuth2 client id"),
  FM_CLIENT_SECRET: z.string().min(1).describe("This agent's OAuth2 client secret"),
  FM_SITE: Slug.describe("Slug of the site this agent serves"),
  FM_SATELLITE: Slug.optional().describe(
    "Satellite name; default: derived from FM_CLIENT_ID (<agent-prefix>-<satellite>)",
  ),
  FM_TOKEN_ISSUER: z.url().optional().describe("OAuth2 issuer for discovery; default FM_HUB_URL"),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(9464)
    .describe("Port of /healthz and /metrics (0: any free port)"),
  METRICS_HOST: z.string().default("0.0.0.0"),
  FM_REFLECT_INTERVAL_S: seconds(30).describe("Seconds between reflector cycles"),
  FM_BACKOFF_BASE_MS: int(1000).describe("First retry delay after a failed cycle; doubles per failure, with jitter"),
  FM_BACKOFF_MAX_S: seconds(60).describe("Largest retry delay"),
  FM_MAX_CONSECUTIVE_FAILURES: int(10).describe("Failed cycles in a row after which the process exits non-zero"),
  FM_HEARTBEAT_INTERVAL_S: seconds(30).describe("Seconds between heartbeats to the hub"),
  FM_HTTP_TIMEOUT_MS: int(30_000).describe("Timeout of one HTTP request to the hub or the source"),
  FM_SHUTDOWN_TIMEOUT_MS: int(10_000).describe("How long SIGTERM waits for a running cycle"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
});
export type CommonConfig = z.infer<typeof CommonConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  }
}

/** Parses the environment against the common schema plus an agent's own variables. */
export function loadConfig<E extends z.ZodRawShape>(
  extra: E,
  env: NodeJS.ProcessEnv = process.env,
): CommonConfig & z.infer<z.ZodObject<E>> {
  const schema = CommonConfigSchema.extend(extra);
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    // Never echo the received value: it may be a secret.
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".") || "(env)"}: ${i.message}`));
  }
  return parsed.data as CommonConfig & z.infer<z.ZodObject<E>>;
}

/** `ironic-agent-sys1-ice2` → `sys1-ice2` for the openstack agent, unless FM_SATELLITE says. */
export function satelliteName(kind: AgentKind, config: CommonConfig): string {
  if (config.FM_SATELLITE) return config.FM_SATELLITE;
  const prefix = `${AGENT_KINDS[kind].clientPrefix}-`;
  if (!config.FM_CLIENT_ID.startsWith(prefix)) {
    throw new ConfigError([
      `FM_SATELLITE: not set, and FM_CLIENT_ID does not start with '${prefix}' to derive it from`,
    ]);
  }
  return config.FM_CLIENT_ID.slice(prefix.length);
}
