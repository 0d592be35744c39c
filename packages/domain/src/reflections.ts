import { z } from "zod";
import { NetboxId, ObjectName, Timestamp, Uuid } from "./common.ts";
import { CpuArchitecture, DeviceClass, NetboxDeviceStatus } from "./inventory.ts";

/** Sources that push their whole view of a site (contract: "Reflection semantics"). */
export const REFLECTION_SOURCES = ["netbox", "ironic-overcloud", "ironic-undercloud", "slurm", "health"] as const;
export const ReflectionSource = z.enum(REFLECTION_SOURCES);
export type ReflectionSource = z.infer<typeof ReflectionSource>;

const Text = z.string().max(10_000).nullable();

/**
 * A list refinement: each item's key (when it has one) appears once; a repeat is reported at
 * the repeating item's field, as a caller can find it.
 */
export function uniqueBy<T>(field: string, key: (item: T) => string | null | undefined) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const first = new Map<string, number>();
    items.forEach((item, n) => {
      const k = key(item);
      if (k === null || k === undefined) return;
      const at = first.get(k);
      if (at === undefined) first.set(k, n);
      else ctx.addIssue({ code: "custom", path: [n, field], message: `'${k}' repeats item ${at}: must be unique` });
    });
  };
}

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

const Name = ObjectName(200);

/**
 * One NetBox device as the netbox agent reports it, with what it references (role with its
 * device class from NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING, type, location, rack) inline, so
 * the hub can create those too. NetBox is authoritative: the hub creates the device when new,
 * and marks (never deletes) one NetBox no longer lists.
 */
export const NetboxItemSchema = z
  .strictObject({
    netboxId: NetboxId,
    name: Name,
    serial: z.string().max(100).nullable(),
    assetTag: z.string().max(100).nullable(),
    status: NetboxDeviceStatus,
    role: z.strictObject({
      slug: z.string().min(1).max(100),
      name: z.string().min(1).max(100),
      netboxId: NetboxId.nullable(),
      deviceClass: DeviceClass,
    }),
    deviceType: z
      .strictObject({
        slug: z.string().min(1).max(100),
        manufacturer: z.string().min(1).max(100),
        model: z.string().min(1).max(100),
        cpuArchitecture: CpuArchitecture,
        netboxId: NetboxId.nullable(),
      })
      .nullable(),
    location: z
      .strictObject({
        slug: z.string().min(1).max(63),
        name: ObjectName(200),
        netboxId: NetboxId.nullable(),
      })
      .nullable(),
    rack: z.strictObject({ name: ObjectName(100), netboxId: NetboxId.nullable() }).nullable(),
    rackPosition: z.number().min(0).max(99999).nullable(),
    platformClass: z.string().max(100).nullable(),
    tags: z.array(z.string().max(100)).max(100),
    bmcAddress: z.string().max(255).nullable(),
    interfaces: z
      .array(
        z.strictObject({
          name: z.string().min(1).max(64),
          type: z.string().max(50).nullable(),
          macAddress: z
            .string()
            .regex(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/)
            .nullable(),
          ibGuid: z.string().max(23).nullable(),
          mgmtOnly: z.boolean(),
          peerDevice: z.string().max(200).nullable(),
          peerInterface: z.string().max(64).nullable(),
          netboxId: NetboxId.nullable(),
        }),
      )
      .max(512)
      .superRefine(uniqueBy("name", (i) => i.name)),
  })
  .meta({ id: "NetboxReflectionItem" });
export type NetboxItem = z.infer<typeof NetboxItemSchema>;

/** One SLURM node as slurmrestd reports it. */
export const SlurmItemSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    device: z
      .string()
      .min(1)
      .max(200)
      .nullable()
      .optional()
      .describe(
        "The device this node is, by name, when the node's name is not the device's (the agent's deviceNamePrefix); null: no device by name. Absent: the node's name",
      ),
    state: z.string().max(40).nullable(),
    flags: z.array(z.string().max(40)).max(50),
    reason: Text,
    partitions: z.array(z.string().max(100)).max(100),
  })
  .meta({ id: "SlurmReflectionItem" });
export type SlurmItem = z.infer<typeof SlurmItemSchema>;

/** One device's health as the health-status agent derives it from Prometheus/Mimir. */
export const HealthItemSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    status: z.enum(["ok", "warning", "critical", "unknown"]),
    conditions: z
      .array(
        z.strictObject({
          name: z.string().max(100),
          status: z.string().max(40),
          message: z.string().max(2000).optional(),
        }),
      )
      .max(100),
  })
  .meta({ id: "HealthReflectionItem" });
export type HealthItem = z.infer<typeof HealthItemSchema>;

/**
 * The NetBox site a netbox push is for, as the agent read it: the hub applies it to the site of
 * the push's URL only (a site the hub created from its NetBox settings gets NetBox's name and ids).
 */
export const NetboxReflectionSiteSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).describe("NetBox's site name"),
    netboxSiteId: NetboxId.describe("NetBox's site id"),
    netboxClusterId: NetboxId.nullable().describe("The NetBox cluster ingested, when exactly one; else null"),
  })
  .meta({ id: "NetboxReflectionSite" });
export type NetboxReflectionSite = z.infer<typeof NetboxReflectionSiteSchema>;

export const ReflectionBodySchema = z
  .strictObject({
    observedAt: Timestamp.describe(
      "When the source was read: a push older than the last accepted one is refused (409)",
    ),
    complete: z.literal(true).describe("The items are the source's whole view of the site"),
    // Each item is checked against its source's schema by the service, which names the item and
    // field at fault; checking here that each is an object first copied every item of a
    // 10,000-item push (a fifth of the push's time). The document still says they are objects.
    items: z
      .array(z.unknown())
      .max(100_000)
      .meta({ items: { type: "object", additionalProperties: {} } })
      .describe(
        "Items of the source's shape: NetboxReflectionItem, IronicReflectionItem, SlurmReflectionItem or HealthReflectionItem",
      ),
    site: NetboxReflectionSiteSchema.optional().describe(
      "NetBox pushes only: NetBox's name and ids of the push's site, applied to that site when they differ",
    ),
  })
  .meta({ id: "ReflectionPush" });
export type ReflectionBody = z.infer<typeof ReflectionBodySchema>;

/**
 * A fleet-wide row (device role, device type) that a NetBox push disagreed with on a field the
 * hub owns: a role's device class (the hub's role mapping, else the class it was created with)
 * and a type's CPU architecture. The push's value is reported, not applied.
 */
export const SharedRowConflictSchema = z
  .object({
    resource: z.enum(["device_role", "device_type", "device"]),
    slug: z.string().describe("The role's or type's slug; a device's name"),
    field: z.enum(["deviceClass", "cpuArchitecture", "name"]),
    hub: z.string().describe("The value the hub keeps"),
    pushed: z.string().describe("The value the push carried"),
  })
  .meta({ id: "SharedRowConflict" });
export type SharedRowConflict = z.infer<typeof SharedRowConflictSchema>;

export const ReflectionResultSchema = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    missing: z.number().int().describe("Devices this source observed before and no longer lists"),
    unmatched: z.number().int().describe("Items that match no device of the site"),
    unmatchedItems: z.array(z.string()).describe("Names or ids of the unmatched items (first 100)"),
    conflicts: z
      .array(SharedRowConflictSchema)
      .optional()
      .describe(
        "NetBox pushes: values the push disagreed with and that were not applied: fleet-wide rows the hub owns, and a device renamed to a name another device of the site still holds (one NetBox no longer lists)",
      ),
  })
  .meta({ id: "ReflectionResult" });
export type ReflectionResult = z.infer<typeof ReflectionResultSchema>;

export const ReflectionParams = z.strictObject({ site_id: Uuid, source: ReflectionSource });

/**
 * The field each item of a push must hold uniquely, as the hub stores it: a NetBox device's
 * name (unique at the site whatever its case, `nameKey`), an Ironic node's UUID (unique in the fleet). SLURM and health
 * items that repeat a name match one device once and report the rest as unmatched.
 */
export function uniqueItemField(source: ReflectionSource): "name" | "uuid" | undefined {
  if (source === "netbox") return "name";
  if (source === "ironic-overcloud" || source === "ironic-undercloud") return "uuid";
  return undefined;
}

/** The item schema of a source. */
export function itemSchemaFor(source: ReflectionSource): z.ZodType {
  if (source === "netbox") return NetboxItemSchema;
  if (source === "ironic-overcloud" || source === "ironic-undercloud") return IronicItemSchema;
  if (source === "slurm") return SlurmItemSchema;
  return HealthItemSchema;
}
