import { z } from "zod";
import { PageQuery, Timestamp, Uuid, listOf } from "./common.ts";

export const TopologySyncRequestSchema = z
  .object({
    id: Uuid,
    siteId: Uuid,
    region: z.string(),
    reason: z.string().nullable(),
    status: z.string(),
    requestedBy: z.string(),
    createdAt: Timestamp,
  })
  .meta({ id: "TopologySyncRequest" });
export type TopologySyncRequest = z.infer<typeof TopologySyncRequestSchema>;
export const TopologySyncCreateSchema = z
  .strictObject({
    reason: z.string().trim().min(1).max(1000).optional().describe("Why, e.g. the tray removed by a node swap"),
  })
  .meta({ id: "TopologySyncCreate" });
export const TopologySyncListSchema = listOf(TopologySyncRequestSchema).meta({ id: "TopologySyncList" });
export type TopologySyncList = z.infer<typeof TopologySyncListSchema>;
export const TopologySyncListQuerySchema = PageQuery;
