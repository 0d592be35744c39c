import { z } from "zod";
import { Timestamp, Uuid } from "./common.ts";

export const FEED_MAX_WAIT_S = 60;

export const InventoryEventSchema = z
  .object({
    position: z.string().describe("Total order of the feed; resume with ?after=<position>"),
    type: z.string().describe("<resource>.<created|updated|deleted>, e.g. device.updated"),
    resourceType: z.enum(["site", "device_role", "device", "job", "slurm_bootstrap_config"]),
    resourceId: z.string(),
    siteId: Uuid.nullable(),
    data: z.record(z.string(), z.unknown()).describe("The resource after the change (for deleted: before it)"),
    requestId: z.string().nullable(),
    occurredAt: Timestamp,
  })
  .meta({ id: "InventoryEvent" });
export type InventoryEvent = z.infer<typeof InventoryEventSchema>;

export const FeedQuerySchema = z.object({
  after: z
    .string()
    .regex(/^\d{1,18}$/, "must be a position from this feed")
    .default("0")
    .describe("Return events after this position (0: from the start)"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(FEED_MAX_WAIT_S)
    .default(0)
    .describe("Long-poll: wait up to this many seconds for an event when none is ready"),
});
export const FeedPageSchema = z
  .object({
    items: z.array(InventoryEventSchema),
    nextAfter: z.string().describe("Pass as ?after= to continue; equals ?after= when there was nothing new"),
  })
  .meta({ id: "InventoryFeedPage" });
export type FeedPage = z.infer<typeof FeedPageSchema>;
