import { z } from "zod";
import { CordonSource } from "./impairment.ts";
import { OrderedPageQuery, PageQuery, Timestamp, Uuid, commaList, listOf } from "./common.ts";
import {
  DEVICE_CLASSES,
  DeviceClass,
  InterfaceSchema,
  IronicInstance,
  NETBOX_DEVICE_STATUSES,
  NetboxDeviceStatus,
} from "./inventory.ts";
import { ConditionSchema } from "./device-conditions.ts";
import { OPERATIONAL_STATUSES, OperationalStatus } from "./device-status.ts";
import { DeviceBurnInSchema } from "./burn-in.ts";

const Observed = { observedAt: Timestamp.nullable().describe("When this source last observed the device") };

export const DeviceSchema = z
  .object({
    id: Uuid,
    name: z.string(),
    site: z.object({ id: Uuid, slug: z.string() }),
    serial: z.string().nullable(),
    assetTag: z.string().nullable(),
    rack: z.object({ id: Uuid, name: z.string(), position: z.number().nullable() }).nullable(),
    deviceType: z.object({ id: Uuid, slug: z.string(), model: z.string(), cpuArchitecture: z.string() }).nullable(),
    role: z.object({ id: Uuid, slug: z.string(), deviceClass: DeviceClass }).nullable(),
    platformClass: z.string().nullable(),
    tags: z.array(z.string()),
    bmcAddress: z.string().nullable(),
    interfaces: z.array(InterfaceSchema),
    netbox: z.object({
      id: z.number().int().nullable(),
      status: NetboxDeviceStatus,
      missing: z.boolean().describe("NetBox no longer lists the device"),
      ...Observed,
    }),
    ironic: z.object({
      instance: IronicInstance.nullable(),
      nodeUuid: Uuid.nullable(),
      provisionState: z.string().nullable(),
      targetProvisionState: z.string().nullable(),
      powerState: z.string().nullable(),
      maintenance: z.boolean().nullable(),
      maintenanceReason: z.string().nullable(),
      lastError: z.string().nullable(),
      fault: z.string().nullable(),
      ...Observed,
    }),
    slurm: z.object({
      nodeName: z.string().nullable(),
      state: z.string().nullable(),
      stateFlags: z.array(z.string()),
      reason: z.string().nullable(),
      partitions: z.array(z.string()),
      ...Observed,
    }),
    health: z.object({
      status: z.string().nullable(),
      conditions: z.array(z.object({ name: z.string(), status: z.string(), message: z.string().optional() })),
      ...Observed,
    }),
    cordoned: z.boolean(),
    cordonReason: z.string().nullable(),
    cordonedBy: z.string().nullable(),
    cordonedAt: Timestamp.nullable(),
    cordonSource: CordonSource.nullable().describe(
      "operator (PATCH) or impairment (health critical too long; released when healthy again); null when not cordoned",
    ),
    notes: z.string().nullable(),
    burnIn: DeviceBurnInSchema.nullable().describe(
      "The device's last burn-in (its job's results per test are on the job); RELEASE refuses a FAILED one without an override",
    ),
    operationalStatus: OperationalStatus,
    conditions: z.array(ConditionSchema),
    stale: z.boolean().describe("A source that observes this device has not done so within the staleness window"),
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "Device" });
export type Device = z.infer<typeof DeviceSchema>;

const bool = z.enum(["true", "false"]).transform((v) => v === "true");

/**
 * What the device list sorts by: a field, ascending, or with a leading `-` descending (the
 * `ordering` parameter of NetBox and Django REST framework). Each is read through an index on
 * (field, id) and (site, field, id), so a sorted page costs what an unsorted one does. Ties run
 * in id order (the same direction), which makes the order total and the cursor exact. The one
 * nullable field, `serial`, sorts as PostgreSQL does: nulls after every value ascending, before
 * every value descending. `operationalStatus` sorts by the stored status in the enum's order
 * (AVAILABLE … UNKNOWN); a stale device is read as STALE but sorts by its stored status.
 */
export const DEVICE_SORT_FIELDS = ["name", "serial", "operationalStatus", "updatedAt"] as const;
export type DeviceSortField = (typeof DEVICE_SORT_FIELDS)[number];
export const DEVICE_SORTS = [
  "name",
  "-name",
  "serial",
  "-serial",
  "operationalStatus",
  "-operationalStatus",
  "updatedAt",
  "-updatedAt",
] as const satisfies readonly (DeviceSortField | `-${DeviceSortField}`)[];
export const DeviceSort = z
  .enum(DEVICE_SORTS)
  .describe("Sort field, `-` first for descending (ties in id order); absent: id order (oldest first)");
export type DeviceSort = z.infer<typeof DeviceSort>;

/** The field and direction of a sort value. */
export function parseDeviceSort(sort: DeviceSort): { field: DeviceSortField; desc: boolean } {
  return sort.startsWith("-")
    ? { field: sort.slice(1) as DeviceSortField, desc: true }
    : { field: sort as DeviceSortField, desc: false };
}

/** The device list's burn-in filter: the outcome of the device's last burn-in, or none (never burnt in). */
export const DEVICE_BURN_IN_FILTERS = ["passed", "failed", "none"] as const;
export type DeviceBurnInFilter = (typeof DEVICE_BURN_IN_FILTERS)[number];

/**
 * One of an enum's values written in any case (`impaired`, `Impaired`), read as the enum spells
 * it; anything else is refused naming the value and the allowed ones.
 */
export const anyCaseOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.string().transform((v, ctx): T[number] => {
    const hit = values.find((x) => x.toLowerCase() === v.toLowerCase());
    if (hit === undefined) {
      ctx.addIssue({ code: "custom", message: `not one of ${values.join(", ")}` });
      return z.NEVER;
    }
    return hit;
  });
/** An enum filter of the device list: one value or several comma-separated (`IMPAIRED,FAILED`), in any case. */
const enumFilter = <const T extends readonly [string, ...string[]]>(values: T) =>
  commaList(anyCaseOf(values), values.length).describe(
    `One or more comma-separated (any case) of: ${values.join(", ")}; a device matches any of them`,
  );

/** The deepest page `page=` jumps to (offset paging reads every row before it). */
export const DEVICE_LIST_MAX_PAGE = 10_000;

export const DeviceListQuerySchema = PageQuery.extend({
  page: z.coerce
    .number()
    .int()
    .min(1)
    .max(DEVICE_LIST_MAX_PAGE)
    .optional()
    .describe(
      "Jump to this 1-based page of `limit` devices (the last is ceil(count / limit)); not with cursor. Its nextCursor pages on from there",
    ),
  sort: DeviceSort.optional(),
  site: z.string().max(63).optional().describe("Site slug or id"),
  role: z.string().max(100).optional().describe("Device role slug"),
  deviceClass: enumFilter(DEVICE_CLASSES).optional(),
  status: enumFilter(NETBOX_DEVICE_STATUSES).optional().describe("NetBox status"),
  provisionState: z.string().max(40).optional().describe("Ironic provision state"),
  operationalStatus: enumFilter(OPERATIONAL_STATUSES).optional(),
  cordoned: bool.optional(),
  stale: bool.optional(),
  name: z.string().max(200).optional().describe("Case-insensitive substring of the name"),
  nameExact: z.string().max(200).optional(),
  serial: z.string().max(100).optional(),
  tag: z.string().max(100).optional(),
  burnIn: enumFilter(DEVICE_BURN_IN_FILTERS)
    .optional()
    .describe("The outcome of the device's last burn-in (none: never burnt in), one or more comma-separated"),
  updatedSince: Timestamp.optional(),
  brief: bool
    .optional()
    .describe("true: each item is a DeviceBrief (name, site and states only), for tables of many devices"),
});
export type DeviceListQuery = z.infer<typeof DeviceListQuerySchema>;

/** What device counts can be grouped by: the site, the operational status as the list reads it. */
export const DEVICE_COUNT_GROUPS = ["site", "operationalStatus"] as const;
export type DeviceCountGroup = (typeof DEVICE_COUNT_GROUPS)[number];
const GROUP_LIST = new RegExp(`^(${DEVICE_COUNT_GROUPS.join("|")})(,(${DEVICE_COUNT_GROUPS.join("|")}))*$`);

/** The list's filters, and how to group the counts (none: the total only). */
export const DeviceCountQuerySchema = DeviceListQuerySchema.omit({
  page: true,
  limit: true,
  cursor: true,
  sort: true,
  brief: true,
}).extend({
  groupBy: z
    .string()
    .max(100)
    .regex(GROUP_LIST, `a comma-separated list of ${DEVICE_COUNT_GROUPS.join(", ")}`)
    .transform((v) => [...new Set(v.split(","))] as DeviceCountGroup[])
    .optional()
    .describe(`Comma-separated: ${DEVICE_COUNT_GROUPS.join(", ")}`),
});
export type DeviceCountQuery = z.infer<typeof DeviceCountQuerySchema>;

/**
 * Exact numbers of the devices matching the list's filters, in total and per group: the same
 * devices the list would page through, each counted under the operational status it reads
 * (STALE for a stale device unless quarantined). Groups without a device are absent.
 */
export const DeviceCountsSchema = z
  .object({
    total: z.number().int(),
    groups: z.array(
      z.object({
        site: z.object({ id: Uuid, slug: z.string() }).optional().describe("Present when grouped by site"),
        operationalStatus: OperationalStatus.optional().describe("Present when grouped by operationalStatus"),
        count: z.number().int(),
      }),
    ),
  })
  .meta({ id: "DeviceCounts" });
export type DeviceCounts = z.infer<typeof DeviceCountsSchema>;
export const DeviceListSchema = listOf(DeviceSchema).meta({ id: "DeviceList" });
export type DeviceList = z.infer<typeof DeviceListSchema>;

/**
 * A device as a table of many shows it (NetBox's `brief`): its name, site, serial and states,
 * the cordon's reason and who/when, the last burn-in, Ironic's failure reason, and when it last changed (the fields the list sorts by), each the same value as in the full
 * representation read at the same moment.
 */
export const DeviceBriefSchema = DeviceSchema.pick({
  id: true,
  name: true,
  site: true,
  serial: true,
  operationalStatus: true,
  stale: true,
  cordoned: true,
  cordonReason: true,
  cordonedBy: true,
  cordonedAt: true,
  burnIn: true,
  updatedAt: true,
})
  .extend({
    netboxStatus: NetboxDeviceStatus.describe("netbox.status of the full representation"),
    provisionState: z.string().nullable().describe("ironic.provisionState of the full representation"),
    failureReason: z
      .string()
      .nullable()
      .describe("Why the device failed as Ironic says it: ironic.lastError, else ironic.fault; null when neither"),
  })
  .meta({ id: "DeviceBrief" });
export type DeviceBrief = z.infer<typeof DeviceBriefSchema>;
export const DeviceBriefListSchema = listOf(DeviceBriefSchema).meta({ id: "DeviceBriefList" });
export type DeviceBriefList = z.infer<typeof DeviceBriefListSchema>;

/** Operator fields: the only part of a device the API lets a person change. */
export const DevicePatchSchema = z
  .strictObject({
    cordoned: z.boolean().optional(),
    cordonReason: z.string().trim().min(1).max(1000).nullable().optional(),
    notes: z.string().max(10_000).nullable().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "at least one field is required" })
  .refine((v) => v.cordoned !== true || (v.cordonReason != null && v.cordonReason !== ""), {
    message: "cordoning needs a cordonReason",
    path: ["cordonReason"],
  })
  .meta({ id: "DevicePatch" });
export type DevicePatch = z.infer<typeof DevicePatchSchema>;

export const HISTORY_FIELDS = [
  "provisionState",
  "operationalStatus",
  "slurmState",
  "healthStatus",
  "cordoned",
  "netboxStatus",
  "maintenance",
  "powerState",
  "burnIn",
] as const;
export const DeviceHistoryEntrySchema = z
  .object({
    id: z.string().describe("Increasing id; page with ?cursor="),
    field: z.string(),
    source: z
      .string()
      .describe("netbox, ironic-overcloud, ironic-undercloud, slurm, health, operator, or hub (derived)"),
    oldValue: z.unknown(),
    newValue: z.unknown(),
    principal: z.string().nullable(),
    requestId: z.string().nullable(),
    changedAt: Timestamp,
  })
  .meta({ id: "DeviceHistoryEntry" });
export type DeviceHistoryEntry = z.infer<typeof DeviceHistoryEntrySchema>;
export const DeviceHistoryListSchema = listOf(DeviceHistoryEntrySchema).meta({ id: "DeviceHistoryList" });
export type DeviceHistoryList = z.infer<typeof DeviceHistoryListSchema>;
export const DeviceHistoryQuerySchema = OrderedPageQuery.extend({ field: z.string().max(50).optional() });
export type DeviceHistoryQuery = z.infer<typeof DeviceHistoryQuerySchema>;
