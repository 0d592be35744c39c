import { z } from "zod";
import { OrderedPageQuery, Timestamp, Uuid, listOf } from "./common.ts";

export const AuditEntrySchema = z
  .object({
    id: Uuid,
    principal: z.string(),
    action: z.string().describe("e.g. site.create, device.update, slurm_bootstrap_config.delete"),
    resourceType: z.string(),
    resourceId: z.string(),
    diff: z
      .record(z.string(), z.object({ before: z.unknown(), after: z.unknown() }))
      .describe("Changed fields with their old and new values"),
    requestId: z.string().nullable(),
    createdAt: Timestamp,
  })
  .meta({ id: "AuditEntry" });
export type AuditEntry = z.infer<typeof AuditEntrySchema>;
export const AuditListSchema = listOf(AuditEntrySchema).meta({ id: "AuditList" });
export type AuditList = z.infer<typeof AuditListSchema>;
export const AuditListQuerySchema = OrderedPageQuery.extend({
  principal: z.string().max(200).optional(),
  action: z.string().max(50).optional(),
  resourceType: z.string().max(50).optional(),
  resourceId: z.string().max(200).optional(),
  requestId: z.string().max(128).optional(),
  since: Timestamp.optional(),
  until: Timestamp.optional(),
});
export type AuditListQuery = z.infer<typeof AuditListQuerySchema>;
