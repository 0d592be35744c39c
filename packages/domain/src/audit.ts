import { z } from "zod";
import { OrderedPageQuery, Timestamp, Uuid, listOf } from "./common.ts";

/** Who made a change, as the audit log names them. */
export const AUDIT_PRINCIPAL_KINDS = ["person", "client", "agent", "hub"] as const;
export type AuditPrincipalKind = (typeof AUDIT_PRINCIPAL_KINDS)[number];

/** The kind and name of an audit row's principal id: `person:<email>`, a client id, or the hub's own (`hub:config`, `local`). */
export function auditPrincipal(
  id: string,
  client?: { kind: string } | undefined,
): { kind: AuditPrincipalKind; name: string } {
  if (id.startsWith("person:")) return { kind: "person", name: id.slice("person:".length) };
  if (client) return { kind: client.kind === "agent" ? "agent" : "client", name: id };
  return { kind: id.startsWith("hub:") || id === "local" ? "hub" : "client", name: id };
}

export const AuditEntrySchema = z
  .object({
    id: Uuid,
    principal: z.string().describe("The principal's id: person:<email>, an OAuth client id, or hub:<reason>"),
    principalKind: z.enum(AUDIT_PRINCIPAL_KINDS).describe("person, client, a satellite's agent, or the hub itself"),
    principalName: z.string().describe("The person's email, or the client's id"),
    action: z.string().describe("e.g. site.create, device.update, slurm_bootstrap_config.delete"),
    resourceType: z.string(),
    resourceId: z.string(),
    resourceName: z
      .string()
      .nullable()
      .describe(
        "The resource's name as of now (a device's or job's name, a site's slug, a satellite's name, a client's id); null when it no longer exists or has none",
      ),
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
