/** What the hub is built from: its database, logger, identity and every setting main.ts reads from the environment. */
import type { Logger } from "pino";
import type pg from "pg";
import type { Registry } from "prom-client";
import type { ImageSourcePolicy, ImpairmentPolicy, NetboxSettingsInput } from "@fm/domain";
import type { PrismaClient } from "./db/client.ts";
import type { IdentityConfig } from "./modules/identity/authenticator.ts";
import type { WebUiConfig } from "./modules/web-ui/service.ts";
import type { Authenticator } from "./plugins/request-context.ts";
import type { SlowClientLimits } from "./plugins/slow-clients.ts";

export interface IdentityDeps {
  config: IdentityConfig;
  /** 32-byte key encryption key for the signing keys at rest. */
  kek: Buffer;
  rotationOverlapMs?: number;
  tokenRateLimitPerMinute?: number;
}

export interface AppDeps {
  prisma: PrismaClient;
  /** The pool behind `prisma`: the feed holds one connection of it to LISTEN for commits. */
  pool?: pg.Pool;
  logger: Logger;
  /** A source that has not observed a device for this long makes it STALE (default 10 min). */
  staleAfterMs?: number;
  /**
   * The NetBox settings of the hub's configuration (FM_NETBOX_DEVICE_FILTERS,
   * FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING), applied when the app is ready if they differ from the
   * configuration applied last; the admin API changes them in between.
   */
  netboxSettings?: NetboxSettingsInput;
  /** A source that has not pushed for a site for this long makes the site's Reporting condition False (default 10 min, the staleness window). */
  siteSilenceAfterMs?: number;
  /** Impairment cordon and release (health critical too long); default 10 min / 30 min / 10 %. */
  impairment?: ImpairmentPolicy;
  /** What an IMAGE_NODE job's image may be (FM_IMAGE_ALLOW_HTTP, FM_IMAGE_HOSTS); default https only, any public host. */
  imagePolicy?: ImageSourcePolicy;
  /** Feed events older than this are purged (default 7 days), and how often to purge (default 1 min). */
  feedRetention?: { retentionMs: number; intervalMs?: number; now?: () => Date };
  /** Longest an inventory snapshot may stream (default 10 min). */
  snapshotTimeoutMs?: number;
  /** Inventory snapshots streaming at once (default: a quarter of the connection pool). */
  snapshotMaxConcurrent?: number;
  /** How long a snapshot's reader may take nothing before the snapshot is cut short (default 60 s). */
  snapshotStallMs?: number;
  bodyLimitBytes?: number;
  /**
   * Request timeouts, connection caps and trusted proxies (FM_REQUEST_TIMEOUT_S,
   * FM_REFLECTION_REQUEST_TIMEOUT_S, FM_MAX_CONNECTIONS, FM_MAX_CONNECTIONS_PER_ADDRESS,
   * FM_TRUST_PROXY); plugins/slow-clients.ts has the defaults.
   */
  slowClients?: Partial<SlowClientLimits>;
  readinessTimeoutMs?: number;
  docsEnabled?: boolean;
  /** The operators' web UI at /ui/ (the built SPA's folder, and the OIDC client it logs people in as). */
  webUi?: Pick<WebUiConfig, "dir" | "clientId"> & {
    /** A web login ends after this long without a request (default 8 h) and this long after it began (default 24 h). */
    sessionIdleS?: number;
    sessionMaxS?: number;
  };
  registry?: Registry;
  identity: IdentityDeps;
  /** Replaces the OAuth2 bearer-token authenticator (tests of other features; FM_AUTH=none). */
  authenticate?: Authenticator;
  /** Lets main() flip /readyz to 503 as soon as shutdown starts. */
  isShuttingDown?: () => boolean;
}
