import { isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import {
  DEFAULT_FEED_RETENTION_S,
  DEFAULT_IMPAIRMENT_POLICY,
  DEFAULT_SITE_SILENCE_AFTER_MS,
  DEFAULT_STALE_AFTER_MS,
  DEVICE_CLASSES,
  EnvironmentSchema,
  ImageHostsSchema,
  NetboxSettingsInputSchema,
  siteSilenceRefusal,
} from "@fm/domain";

/** A variable holding JSON of `schema`; `expected` names the form in the error. */
function jsonOf<T extends z.ZodType>(schema: T, expected: string) {
  return z.string().transform((v, ctx): z.output<T> => {
    let doc: unknown;
    try {
      doc = JSON.parse(v);
    } catch {
      doc = undefined;
    }
    const parsed = schema.safeParse(doc);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: "custom", message: `must be ${expected}` });
    return z.NEVER;
  });
}

/** A comma-separated list of IP addresses and CIDRs (`10.0.0.0/8, fd00::/8, 192.0.2.7`). */
const CidrList = z.string().transform((v, ctx) => {
  const entries = v
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [ip = "", bits, extra] = entry.split("/");
    const family = isIP(ip);
    const max = family === 6 ? 128 : 32;
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !prefixOk || extra !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `must be comma-separated IP addresses or CIDRs: ${JSON.stringify(entry)} is neither`,
      });
      return z.NEVER;
    }
  }
  return entries;
});

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

const ExpectedSatellites = z.array(
  z.strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
    sites: z.array(z.string()).min(1),
    environment: EnvironmentSchema,
  }),
);
const ScopeMappingSchema = z.strictObject({
  emailDomains: z.record(z.string(), z.array(z.string())).optional(),
  groups: z.record(z.string(), z.array(z.string())).optional(),
  groupsClaim: z.string().optional(),
});

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
  FM_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
  /**
   * A request's headers must arrive within this many seconds, and then its body within as many
   * again (408 and the connection closed otherwise); reflection pushes have their own.
   */
  FM_REQUEST_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(30),
  /**
   * How long an authenticated reflection push's body may take to arrive, seconds (64 MiB at
   * 1 Mbit/s takes ~9 min), and the ceiling of any whole request; at least FM_REQUEST_TIMEOUT_S.
   */
  FM_REFLECTION_REQUEST_TIMEOUT_S: z.coerce.number().int().min(1).max(7200).default(600),
  /** Connections the hub keeps open at most; more are closed as they are accepted. */
  FM_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(4096),
  /** Connections one peer address may keep open (a trusted proxy's count only overall); at most FM_MAX_CONNECTIONS. */
  FM_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).default(256),
  /**
   * Comma-separated addresses and CIDRs of the proxies (the ingress) whose X-Forwarded-For the hub
   * believes: behind them the caller's address is the last hop they did not add. Empty: the peer.
   */
  FM_TRUST_PROXY: CidrList.default([]),
  /** Connections in the hub's PostgreSQL pool. */
  FM_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** How long /readyz waits for the database before answering 503, milliseconds. */
  FM_READINESS_TIMEOUT_MS: z.coerce.number().int().min(50).default(1000),
  /** Longest a graceful shutdown may take before the process exits anyway, milliseconds. */
  FM_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Apply pending SQL migrations at start (under an advisory lock). */
  FM_MIGRATE_ON_START: bool.default(true),
  /** A source that has not observed a device for this long makes it STALE, seconds (runbook: 10 min). */
  FM_STALE_AFTER_S: z.coerce
    .number()
    .int()
    .min(10)
    .default(DEFAULT_STALE_AFTER_MS / 1000),
  /**
   * A source that has not pushed a reflection for a site for this long makes the site's Reporting
   * condition False, seconds; at most FM_STALE_AFTER_S (default: the same 10 min).
   */
  FM_SITE_SILENCE_AFTER_S: z.coerce
    .number()
    .int()
    .min(10)
    .default(DEFAULT_SITE_SILENCE_AFTER_MS / 1000),
  /** Health critical this long cordons a device (source impairment), seconds. */
  FM_IMPAIRMENT_CORDON_AFTER_S: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_IMPAIRMENT_POLICY.cordonAfterMs / 1000),
  /** Health ok this long releases an impairment cordon, seconds. */
  FM_IMPAIRMENT_RELEASE_AFTER_S: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_IMPAIRMENT_POLICY.releaseAfterMs / 1000),
  /** Largest share of a site's devices impairment may cordon (0-1); above it the site is held instead (0: every due cordon is held). */
  FM_IMPAIRMENT_MAX_SITE_FRACTION: z.coerce.number().min(0).max(1).default(DEFAULT_IMPAIRMENT_POLICY.maxSiteFraction),
  /** How long the inventory feed keeps events, seconds; a reader further behind must resnapshot (410). */
  FM_FEED_RETENTION_S: z.coerce.number().int().min(60).default(DEFAULT_FEED_RETENTION_S),
  /**
   * Longest an inventory snapshot may stream, seconds (its transaction's limit). The feed's
   * retention must be at least twice this, or a reader could find the events after its snapshot
   * purged before it could read them, and resnapshot forever.
   */
  FM_FEED_SNAPSHOT_TIMEOUT_S: z.coerce.number().int().min(10).max(3600).default(600),
  /** Accept http:// image URLs for IMAGE_NODE (a mirror on a trusted provisioning network); https:// always. */
  FM_IMAGE_ALLOW_HTTP: bool.default(false),
  /** Comma-separated hosts an IMAGE_NODE image URL may name (`.example.com` takes subdomains); empty: any public host. */
  FM_IMAGE_HOSTS: ImageHostsSchema.default([]),
  /** Serve /docs (Swagger UI). /openapi.json is always served. */
  FM_DOCS_ENABLED: bool.default(true),
  /** The built web UI served at /ui/ (`npm run build` writes apps/web/dist); default: apps/web/dist of this checkout. */
  FM_WEB_DIR: z.string().min(1).optional(),
  /** The public OAuth client id the web UI logs people in as at FM_OIDC_ISSUER (authorization code + PKCE). */
  FM_WEB_CLIENT_ID: z.string().min(1).max(200).default("fleet-web"),
  /** A web UI login ends after this many seconds without a request (counted to the minute). */
  FM_WEB_SESSION_IDLE_S: z.coerce.number().int().min(120).max(2_592_000).default(28_800),
  /** A web UI login ends this many seconds after it began, whatever happens; at least FM_WEB_SESSION_IDLE_S. */
  FM_WEB_SESSION_MAX_S: z.coerce.number().int().min(300).max(2_592_000).default(86_400),
  /** This hub's OAuth2 issuer URL (what agents use as FM_HUB_URL); default: the listen address. */
  FM_ISSUER_URL: z.string().url().optional(),
  /** `aud` of the hub's access tokens. */
  FM_TOKEN_AUDIENCE: z.string().min(1).default("fleet-manager"),
  /** Access token lifetime, seconds. */
  FM_TOKEN_LIFETIME_S: z.coerce.number().int().min(60).max(86_400).default(600),
  /** Key that encrypts the signing keys at rest: base64 of 32 bytes. Default: generated into FM_DATA_DIR/kek.secret. */
  FM_KEY_ENCRYPTION_KEY: z
    .string()
    .refine((v) => Buffer.from(v, "base64").length === 32, "must be base64 of exactly 32 bytes")
    .optional(),
  /** Secret of the `fleet-admin` client created on an empty database; default: generated and printed once. */
  FM_BOOTSTRAP_ADMIN_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  /** JSON list of satellites the hub expects: [{"name":"sys1-ice2","sites":["keflavik"],"environment":"prod"}]. */
  FM_EXPECTED_SATELLITES: z
    .string()
    .transform((v, ctx) => {
      try {
        return ExpectedSatellites.parse(JSON.parse(v));
      } catch (err) {
        ctx.addIssue({
          code: "custom",
          message: `must be a JSON list of {name, sites, environment}: ${(err as Error).message.slice(0, 200)}`,
        });
        return z.NEVER;
      }
    })
    .optional(),
  /** How long a rotated-out client secret keeps working, seconds. */
  FM_SECRET_ROTATION_OVERLAP_S: z.coerce.number().int().min(0).default(3600),
  /** Refused token requests allowed per (address, client id) per minute (per address: four times this). */
  FM_TOKEN_RATE_LIMIT_PER_MIN: z.coerce.number().int().min(1).default(60),
  /** Issuer URL of the OIDC provider whose tokens people use. Unset: people cannot call the API. */
  FM_OIDC_ISSUER: z.string().url().optional(),
  /** Audience the people's tokens must carry. */
  FM_OIDC_AUDIENCE: z.string().min(1).default("fleet-manager"),
  /** JSON mapping from claims to scopes: {"emailDomains":{"example.com":["fleet.read"]},"groups":{"fleet-admins":["fleet.admin"]}}. */
  FM_OIDC_SCOPE_MAPPING: z
    .string()
    .transform((v, ctx) => {
      try {
        return ScopeMappingSchema.parse(JSON.parse(v));
      } catch (err) {
        ctx.addIssue({
          code: "custom",
          message: `must be JSON like {"emailDomains":{…},"groups":{…}}: ${(err as Error).message.slice(0, 200)}`,
        });
        return z.NEVER;
      }
    })
    .default({ emailDomains: {}, groups: {} }),
  /**
   * JSON: NetBox device-role slug -> device class ({"gpu-node":"GPU_COMPUTE"}), the hub's
   * configuration of the NetBox settings (with FM_NETBOX_DEVICE_FILTERS): applied at start when
   * it differs from the configuration applied last; the admin API changes it in between.
   */
  FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING: jsonOf(
    NetboxSettingsInputSchema.shape.deviceRoleClassMapping,
    `a JSON object of role slug -> one of ${DEVICE_CLASSES.join(", ")}`,
  ).default({}),
  /** JSON: the NetBox clusters each site's netbox agent ingests: [{"site":"iad1","clusters":["iad1-compute"]}]. */
  FM_NETBOX_DEVICE_FILTERS: jsonOf(
    NetboxSettingsInputSchema.shape.deviceFilters,
    'a JSON list of {"site": "<slug>", "clusters": ["<NetBox cluster name>", ...]}',
  ).default([]),
  /** `none` turns authentication off (every caller is an admin): only for local development, and only on a loopback HOST. */
  FM_AUTH: z.enum(["oauth", "none"]).default("oauth"),
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
  const env = { ...result.data, FM_DATA_DIR: resolve(result.data.FM_DATA_DIR) };
  if (env.FM_FEED_RETENTION_S < 2 * env.FM_FEED_SNAPSHOT_TIMEOUT_S) {
    throw new EnvError(
      `invalid environment:\n  FM_FEED_RETENTION_S: must be at least twice FM_FEED_SNAPSHOT_TIMEOUT_S (${env.FM_FEED_SNAPSHOT_TIMEOUT_S} s): shorter, a reader could never catch up after a snapshot`,
    );
  }
  if (env.FM_REFLECTION_REQUEST_TIMEOUT_S < env.FM_REQUEST_TIMEOUT_S)
    throw new EnvError(
      `invalid environment:\n  FM_REFLECTION_REQUEST_TIMEOUT_S: must be at least FM_REQUEST_TIMEOUT_S (${env.FM_REFLECTION_REQUEST_TIMEOUT_S} < ${env.FM_REQUEST_TIMEOUT_S})`,
    );
  if (env.FM_MAX_CONNECTIONS_PER_ADDRESS > env.FM_MAX_CONNECTIONS)
    throw new EnvError(
      `invalid environment:\n  FM_MAX_CONNECTIONS_PER_ADDRESS: must be at most FM_MAX_CONNECTIONS (${env.FM_MAX_CONNECTIONS_PER_ADDRESS} > ${env.FM_MAX_CONNECTIONS})`,
    );
  const silence = siteSilenceRefusal(env.FM_SITE_SILENCE_AFTER_S * 1000, env.FM_STALE_AFTER_S * 1000);
  if (silence)
    throw new EnvError(`invalid environment:\n  FM_SITE_SILENCE_AFTER_S: must be at most FM_STALE_AFTER_S: ${silence}`);
  if (env.FM_WEB_SESSION_IDLE_S > env.FM_WEB_SESSION_MAX_S)
    throw new EnvError(
      `invalid environment:\n  FM_WEB_SESSION_IDLE_S: must be at most FM_WEB_SESSION_MAX_S (${env.FM_WEB_SESSION_IDLE_S} > ${env.FM_WEB_SESSION_MAX_S})`,
    );
  if (env.FM_AUTH === "none" && !["127.0.0.1", "::1", "localhost"].includes(env.HOST)) {
    throw new EnvError(
      "invalid environment:\n  FM_AUTH: 'none' is only allowed with a loopback HOST (127.0.0.1, ::1, localhost)",
    );
  }
  return env;
}
