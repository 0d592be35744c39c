/**
 * A connector instance's configuration, parsed once at start: a bad value stops the process
 * (exit 2) naming the variable, never echoing its value (it may be a secret). Secrets are read
 * from files (Kubernetes-mounted Secrets), so they are in neither the environment nor the logs.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { Slug } from "@fm/domain";

const int = (def: number, min = 1) => z.coerce.number().int().min(min).default(def);
const url = z.url().transform((u) => u.replace(/\/+$/, ""));

export const ConnectorEnvSchema = z
  .object({
    CONNECTOR_NAME: Slug.describe("Instance name, the `connector` metric label, e.g. matrix-prod"),
    CONNECTOR_DATABASE_URL: z.string().min(1).describe("The connector's own PostgreSQL database (queue and cursor)"),
    CONNECTOR_SITES: z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .pipe(z.array(Slug).min(1))
      .describe("Comma-separated slugs of the sites this instance ships"),
    CONNECTOR_SINK: z.enum(["kusto", "webhook"]).default("kusto"),
    FM_HUB_URL: url.describe("Hub base URL"),
    FM_CLIENT_ID: z.string().min(1).describe("The connector's OAuth2 client at the hub (scope fleet.read)"),
    FM_CLIENT_SECRET_FILE: z.string().min(1).describe("File holding that client's secret"),
    FM_TOKEN_ISSUER: z.url().optional().describe("OAuth2 issuer for discovery; default FM_HUB_URL"),
    KUSTO_CLUSTER_URL: url
      .optional()
      .describe("Kusto ingestion endpoint, e.g. https://ingest-matrix.westus.kusto.windows.net"),
    KUSTO_DATABASE: z.string().min(1).optional(),
    KUSTO_TABLE: z.string().min(1).optional(),
    KUSTO_MAPPING_NAME: z.string().min(1).optional().describe("The table's pre-created JSON ingestion mapping"),
    ENTRA_AUTHORITY: url.default("https://login.microsoftonline.com").describe("Entra ID authority host"),
    ENTRA_TENANT_ID: z.string().min(1).optional(),
    ENTRA_CLIENT_ID: z.string().min(1).optional(),
    ENTRA_CLIENT_SECRET_FILE: z.string().min(1).optional().describe("File holding the Entra ID client secret"),
    KUSTO_TOKEN_SCOPE: z.string().optional().describe("Token scope; default {KUSTO_CLUSTER_URL}/.default"),
    WEBHOOK_URL: z.url().optional(),
    WEBHOOK_SECRET_FILE: z.string().min(1).optional().describe("File holding the whsec_… signing secret"),
    CONNECTOR_BATCH_SIZE: int(500).describe("Records per delivery request, at most"),
    CONNECTOR_FEED_PAGE_SIZE: int(500).describe("Feed events per page (1-1000)"),
    CONNECTOR_FEED_WAIT_S: int(20, 0).describe("Long-poll wait of a feed read, seconds (0-60)"),
    CONNECTOR_BACKOFF_BASE_MS: int(500).describe("First retry delay; doubles per failure, with jitter"),
    CONNECTOR_BACKOFF_MAX_S: int(60).describe("Largest retry delay, seconds"),
    CONNECTOR_SLA_S: int(300).describe("Freshness objective: the oldest undelivered record's age, seconds"),
    CONNECTOR_HTTP_TIMEOUT_MS: int(30_000).describe("Timeout of one request to the hub (beyond the wait) or the sink"),
    CONNECTOR_SHUTDOWN_TIMEOUT_MS: int(10_000).describe("How long SIGTERM waits for a request in flight"),
    METRICS_PORT: z.coerce
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(9464)
      .describe("/healthz /readyz /metrics (0: any)"),
    METRICS_HOST: z.string().default("0.0.0.0"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
  })
  .superRefine((c, ctx) => {
    const need = (keys: (keyof typeof c)[], why: string) => {
      for (const k of keys)
        if (c[k] === undefined) ctx.addIssue({ code: "custom", path: [k], message: `required ${why}` });
    };
    if (c.CONNECTOR_SINK === "kusto")
      need(
        [
          "KUSTO_CLUSTER_URL",
          "KUSTO_DATABASE",
          "KUSTO_TABLE",
          "KUSTO_MAPPING_NAME",
          "ENTRA_TENANT_ID",
          "ENTRA_CLIENT_ID",
          "ENTRA_CLIENT_SECRET_FILE",
        ],
        "with CONNECTOR_SINK=kusto",
      );
    if (c.CONNECTOR_SINK === "webhook") need(["WEBHOOK_URL", "WEBHOOK_SECRET_FILE"], "with CONNECTOR_SINK=webhook");
    if (c.CONNECTOR_FEED_PAGE_SIZE > 1000)
      ctx.addIssue({ code: "custom", path: ["CONNECTOR_FEED_PAGE_SIZE"], message: "at most 1000" });
    if (c.CONNECTOR_FEED_WAIT_S > 60)
      ctx.addIssue({ code: "custom", path: ["CONNECTOR_FEED_WAIT_S"], message: "at most 60" });
  });
export type ConnectorConfig = z.infer<typeof ConnectorEnvSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv): ConnectorConfig {
  const parsed = ConnectorEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".") || "(env)"}: ${i.message}`));
  return parsed.data;
}

/**
 * A secret from its file, read at each use so a rotated Kubernetes Secret is picked up without a
 * restart. The error names the variable and the path, never the content.
 */
export function readSecret(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError([`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`]);
  }
  const secret = text.trim();
  if (!secret) throw new ConfigError([`${variable}: ${path} is empty`]);
  return secret;
}
