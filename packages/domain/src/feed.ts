/**
 * The inventory change feed: one event per change to a site, device role or type, device, job,
 * the NetBox settings or SLURM bootstrap config, in one total order. Each event type carries one data shape, defined
 * here; connectors parse the feed with these schemas, and the hub's writers are typed by them.
 */
import { z } from "zod";
import { Slug, Timestamp, Uuid } from "./common.ts";
import { DeviceSchema } from "./devices.ts";
import { DeviceRoleSchema, DeviceTypeSchema } from "./inventory.ts";
import { JobSchema } from "./jobs.ts";
import { NetboxSettingsSchema } from "./netbox-settings.ts";
import { SiteRecordSchema, SiteSchema } from "./sites.ts";
import { SlurmBootstrapConfigSchema } from "./slurm-bootstrap.ts";

export const FEED_MAX_WAIT_S = 60;

/** A device role as its events carry it: NetBox's fields, without the list's per-site counts. */
export const DeviceRoleEventDataSchema = DeviceRoleSchema.pick({
  id: true,
  slug: true,
  name: true,
  deviceClass: true,
}).meta({ id: "DeviceRoleSummary" });

/** A SLURM bootstrap config as its events carry it: user-data (it can hold credentials) as a digest. */
export const SlurmBootstrapConfigEventDataSchema = SlurmBootstrapConfigSchema.extend({
  userData: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .nullable()
    .describe("SHA-256 digest of the user-data, never the text"),
}).meta({ id: "RedactedSlurmBootstrapConfig" });

/**
 * The data of each event type: the resource after the change (for `deleted`: before it), as
 * the API represents it.
 */
export const INVENTORY_EVENT_DATA = {
  "site.created": SiteRecordSchema,
  "site.updated": SiteRecordSchema,
  "site.deleted": SiteRecordSchema,
  "device_role.created": DeviceRoleEventDataSchema,
  "device_role.updated": DeviceRoleEventDataSchema,
  "device_type.created": DeviceTypeSchema,
  "device_type.updated": DeviceTypeSchema,
  "netbox_settings.updated": NetboxSettingsSchema,
  "device.created": DeviceSchema,
  "device.updated": DeviceSchema,
  "job.created": JobSchema,
  "job.updated": JobSchema,
  "slurm_bootstrap_config.created": SlurmBootstrapConfigEventDataSchema,
  "slurm_bootstrap_config.updated": SlurmBootstrapConfigEventDataSchema,
  "slurm_bootstrap_config.deleted": SlurmBootstrapConfigEventDataSchema,
} as const;
export type InventoryEventType = keyof typeof INVENTORY_EVENT_DATA;
export const INVENTORY_EVENT_TYPES = Object.keys(INVENTORY_EVENT_DATA) as InventoryEventType[];
/** `site` of `site.created`. */
export type InventoryEventResource<T extends InventoryEventType = InventoryEventType> = T extends `${infer R}.${string}`
  ? R
  : never;
/** `created` of `site.created`. */
export type InventoryEventVerb<T extends InventoryEventType = InventoryEventType> = T extends `${string}.${infer V}`
  ? V
  : never;
export type InventoryEventData<T extends InventoryEventType = InventoryEventType> = z.output<
  (typeof INVENTORY_EVENT_DATA)[T]
>;

const inventoryEventOf = <T extends InventoryEventType>(type: T) =>
  z.object({
    position: z.string().describe("Total order of the feed; resume with ?after=<position>"),
    type: z.literal(type),
    resourceType: z.literal(type.split(".")[0] as InventoryEventResource<T>),
    resourceId: z.string(),
    siteId: Uuid.nullable(),
    data: INVENTORY_EVENT_DATA[type] as z.ZodType as (typeof INVENTORY_EVENT_DATA)[T],
    requestId: z.string().nullable(),
    occurredAt: Timestamp,
  });
type InventoryEventVariants = { [T in InventoryEventType]: ReturnType<typeof inventoryEventOf<T>> };
const VARIANTS = INVENTORY_EVENT_TYPES.map(inventoryEventOf) as unknown as [
  InventoryEventVariants[InventoryEventType],
  ...InventoryEventVariants[InventoryEventType][],
];

/** One feed event: a union on `type`, each type with its own data schema. */
export const InventoryEventSchema = z.discriminatedUnion("type", VARIANTS).meta({ id: "InventoryEvent" });
export type InventoryEvent = z.infer<typeof InventoryEventSchema>;

/** Default of FM_FEED_RETENTION_S: the hub keeps feed events this long (7 days), seconds. */
export const DEFAULT_FEED_RETENTION_S = 604_800;
/** Problem code of a feed read whose `after` is older than the events the hub still keeps (410). */
export const FEED_CURSOR_EXPIRED = "feed_cursor_expired";
export const INVENTORY_SNAPSHOT_PATH = "/api/v1/feeds/inventory/snapshot";
export const INVENTORY_SNAPSHOT_CONTENT_TYPE = "application/x-ndjson";

/** `?site=a&site=b` (or one `?site=a`): the sites to include, by slug; none means every site. */
const SiteFilter = z
  .union([Slug, z.array(Slug).max(100)])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? [...new Set(v)] : [v]))
  .describe("Site slug, repeatable; only these sites' resources (none: every site)");

export const FeedQuerySchema = z.object({
  after: z
    .string()
    .regex(/^(\d{1,18}|latest)$/, "must be a position from this feed, or latest")
    .default("0")
    .describe(
      "Return events after this position (0: from the start; latest: from the feed's head now, so only new ones)",
    ),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(FEED_MAX_WAIT_S)
    .default(0)
    .describe("Long-poll: wait up to this many seconds for an event when none is ready"),
  site: SiteFilter.describe(
    "Site slug, repeatable: only events of these sites and events of no site (roles, types, settings); positions of other events are skipped, nextAfter still advances past them",
  ),
});
export type FeedQuery = z.output<typeof FeedQuerySchema>;

export const FeedPageSchema = z
  .object({
    items: z.array(InventoryEventSchema),
    nextAfter: z.string().describe("Pass as ?after= to continue; equals ?after= when there was nothing new"),
    head: z
      .string()
      .describe("Highest position the feed has given so far: head - nextAfter is how many events the reader lags"),
  })
  .meta({ id: "InventoryFeedPage" });
export type FeedPage = z.infer<typeof FeedPageSchema>;

export const InventorySnapshotQuerySchema = z.object({ site: SiteFilter });
export type InventorySnapshotQuery = z.output<typeof InventorySnapshotQuerySchema>;

/**
 * One line of `GET /api/v1/feeds/inventory/snapshot` (NDJSON): first `snapshot` (its feed
 * position), then every site, device role and device as their own GETs return them, then `end`
 * with the number of resource lines. The resources are exactly the state after the feed events
 * up to `position`: continue with the feed at `?after=<position>`.
 */
export const InventorySnapshotLineSchema = z
  .discriminatedUnion("kind", [
    z.object({
      kind: z.literal("snapshot"),
      position: z.string().describe("Feed position the data reflects; read the feed from ?after=<position>"),
      takenAt: Timestamp,
      sites: z.array(z.string()).describe("Slugs of the sites included"),
    }),
    z.object({ kind: z.literal("site"), data: SiteSchema }),
    z.object({ kind: z.literal("deviceRole"), data: DeviceRoleSchema }),
    z.object({ kind: z.literal("device"), data: DeviceSchema }),
    z.object({ kind: z.literal("end"), count: z.number().int().min(0).describe("Resource lines sent") }),
  ])
  .meta({ id: "InventorySnapshotLine" });
export type InventorySnapshotLine = z.infer<typeof InventorySnapshotLineSchema>;
