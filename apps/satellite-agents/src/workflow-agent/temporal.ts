/** Where the site's Temporal is: shared by the workflow agent (client) and the worker. */
import { z } from "zod";

export const TemporalEnv = {
  TEMPORAL_ADDRESS: z.string().min(1).default("127.0.0.1:7233").describe("Temporal frontend host:port"),
  TEMPORAL_NAMESPACE: z.string().min(1).default("default"),
  TEMPORAL_TASK_QUEUE: z.string().min(1).optional().describe("Default fleet-manager-<FM_SITE>: one queue per site"),
};
