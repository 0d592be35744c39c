/** Where the site's Temporal is: read by the workflow agent (the client side) and the worker alike. */
import { z } from "zod";
import { taskQueueFor } from "@fm/domain/workflows";

export const TemporalEnv = {
  TEMPORAL_ADDRESS: z.string().min(1).default("127.0.0.1:7233").describe("Temporal frontend host:port"),
  TEMPORAL_NAMESPACE: z.string().min(1).default("default"),
  TEMPORAL_TASK_QUEUE: z.string().min(1).optional().describe("Default fleet-manager-<FM_SITE>: one queue per site"),
};
export type TemporalConfig = z.infer<z.ZodObject<typeof TemporalEnv>>;

/** The site's task queue: TEMPORAL_TASK_QUEUE, else one named after the site. */
export const taskQueueOf = (config: TemporalConfig, siteSlug: string): string =>
  config.TEMPORAL_TASK_QUEUE ?? taskQueueFor(siteSlug);
