import { z } from "zod";
import { Timestamp, Uuid } from "./common.ts";

/** Sources that push their whole view of a site (contract: "Reflection semantics"). */
export const REFLECTION_SOURCES = ["netbox", "ironic-overcloud", "ironic-undercloud", "slurm", "health"] as const;
export const ReflectionSource = z.enum(REFLECTION_SOURCES);
export type ReflectionSource = z.infer<typeof ReflectionSource>;

const Text = z.string().max(10_000).nullable();

/** One Ironic node as the OpenStack agent reports it (Ironic API field names, camelCased). */
export const IronicItemSchema = z
  .strictObject({
    uuid: Uuid,
    name: z.string().max(200).nullable(),
    serial: z.string().max(100).nullable().optional(),
    provisionState: z.string().max(40).nullable(),
    targetProvisionState: z.string().max(40).nullable(),
    powerState: z.string().max(40).nullable(),
    maintenance: z.boolean(),
    maintenanceReason: Text,
    lastError: Text,
    fault: z.string().max(100).nullable(),
  })
  .meta({ id: "IronicReflectionItem" });
export type IronicItem = z.infer<typeof IronicItemSchema>;

/** One SLURM node as slurmrestd reports it. */
export const SlurmItemSchema = z
  .strictObject({ name: z.string().min(1).max(200), state: z.string().max(40).nullable(), flags: z.array(z.string().max(40)).max(50), reason: Text, partitions: z.array(z.string().max(100)).max(100) })
  .meta({ id: "SlurmReflectionItem" });
export type SlurmItem = z.infer<typeof SlurmItemSchema>;

/** One device's health as the health-status agent derives it from Prometheus/Mimir. */
export const HealthItemSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    status: z.enum(["ok", "warning", "critical", "unknown"]),
    conditions: z.array(z.strictObject({ name: z.string().max(100), status: z.string().max(40), message: z.string().max(2000).optional() })).max(100),
  })
  .meta({ id: "HealthReflectionItem" });
export type HealthItem = z.infer<typeof HealthItemSchema>;

export const ReflectionBodySchema = z
  .strictObject({
    observedAt: Timestamp.describe("When the source was read: a push older than the last accepted one is refused (409)"),
    complete: z.literal(true).describe("The items are the source's whole view of the site"),
    items: z.array(z.record(z.string(), z.unknown())).max(100_000).describe("Items of the source's shape: IronicReflectionItem, SlurmReflectionItem or HealthReflectionItem"),
  })
  .meta({ id: "ReflectionPush" });
export type ReflectionBody = z.infer<typeof ReflectionBodySchema>;

export const ReflectionResultSchema = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    missing: z.number().int().describe("Devices this source observed before and no longer lists"),
    unmatched: z.number().int().describe("Items that match no device of the site"),
    unmatchedItems: z.array(z.string()).describe("Names or ids of the unmatched items (first 100)"),
  })
  .meta({ id: "ReflectionResult" });
export type ReflectionResult = z.infer<typeof ReflectionResultSchema>;

export const ReflectionParams = z.strictObject({ site_id: Uuid, source: ReflectionSource });

/** The item schema of a source (NetBox's arrives with the NetBox agent, #6). */
export function itemSchemaFor(source: ReflectionSource): z.ZodType | undefined {
  if (source === "ironic-overcloud" || source === "ironic-undercloud") return IronicItemSchema;
  if (source === "slurm") return SlurmItemSchema;
  if (source === "health") return HealthItemSchema;
  return undefined;
}
