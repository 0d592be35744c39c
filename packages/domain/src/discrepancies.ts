/**
 * Discrepancies: devices (or pushed items) on which the sources disagree. One definition of
 * each kind; the hub keeps the open ones with the time each was first seen.
 *
 *  - netbox_active_without_ironic_node  NetBox says `active`, the device is of a class Ironic
 *                                 manages, the site's Ironic reports, and no Ironic node matches it.
 *  - ironic_node_unmatched        an Ironic node matches no device of the site.
 *  - slurm_node_unmatched         a SLURM node matches no device of the site.
 *  - ironic_available_netbox_staged  Ironic offers the node (`available`) while NetBox still says
 *                                 `staged`.
 *  - slurm_drained_externally     SLURM drains the node for a reason that is not the hub's cordon
 *                                 (CORDON_REASON_PREFIX), while the hub has it uncordoned
 *                                 and so allocatable.
 *  - health_critical_not_cordoned the health checker says `critical` and the device is not cordoned.
 *  - unobserved                   no source has observed the device for longer than the staleness
 *                                 window (FM_STALE_AFTER_S); this one depends on the clock alone,
 *                                 so the hub derives it when asked (since = last observation +
 *                                 window) instead of keeping it.
 */
import { z } from "zod";
import { PageQuery, Timestamp, Uuid, commaList, listOf } from "./common.ts";
import { CORDON_REASON_PREFIX } from "./impairment.ts";
import { isSlurmDrained } from "./slurm-nodes.ts";

export const DISCREPANCY_KINDS = [
  "netbox_active_without_ironic_node",
  "ironic_node_unmatched",
  "slurm_node_unmatched",
  "ironic_available_netbox_staged",
  "slurm_drained_externally",
  "health_critical_not_cordoned",
  "unobserved",
] as const;
export const DiscrepancyKind = z.enum(DISCREPANCY_KINDS);
export type DiscrepancyKind = z.infer<typeof DiscrepancyKind>;

/** Device classes whose machines Ironic manages (a switch has no Ironic node, and that is fine). */
export const IRONIC_MANAGED_CLASSES: readonly string[] = ["GPU_COMPUTE", "CPU_BAREMETAL", "CPU_HYPERVISOR"];

/** What the values seen are: source field -> value (null: the source has no value). */
export type Observed = Record<string, string | null>;

/** What the device kinds read of a device. */
export interface DiscrepancyDevice {
  deviceClass: string | null;
  netboxStatus: string;
  netboxMissing: boolean;
  netboxObservedAt: Date | null;
  ironicNodeUuid: string | null;
  ironicProvisionState: string | null;
  ironicObservedAt: Date | null;
  slurmState: string | null;
  slurmStateFlags: string[];
  slurmReason: string | null;
  slurmObservedAt: Date | null;
  healthStatus: string | null;
  cordoned: boolean;
}

/**
 * The device fields the device kinds read, in DiscrepancyDevice's order, its role's class aside. A
 * change of any of them, or of the device's role (which gives deviceClass), can open or close one
 * of the device's discrepancies, so a writer that changes none of DISCREPANCY_INPUTS reconciles
 * nothing.
 */
export const DISCREPANCY_DEVICE_FIELDS = [
  "netboxStatus",
  "netboxMissing",
  "netboxObservedAt",
  "ironicNodeUuid",
  "ironicProvisionState",
  "ironicObservedAt",
  "slurmState",
  "slurmStateFlags",
  "slurmReason",
  "slurmObservedAt",
  "healthStatus",
  "cordoned",
] as const satisfies readonly Exclude<keyof DiscrepancyDevice, "deviceClass">[];
/** Compiles only while DISCREPANCY_DEVICE_FIELDS names every field of DiscrepancyDevice but deviceClass. */
const _everyFieldRead: Exclude<
  keyof DiscrepancyDevice,
  "deviceClass" | (typeof DISCREPANCY_DEVICE_FIELDS)[number]
> extends never
  ? true
  : never = true;
export const DISCREPANCY_INPUTS = [...DISCREPANCY_DEVICE_FIELDS, "deviceRoleId"] as const;

export interface FoundDiscrepancy {
  kind: DiscrepancyKind;
  observed: Observed;
}

/** The device kinds that hold for `d` now; `ironicReports`: the site has had an Ironic push accepted. */
export function deviceDiscrepancies(d: DiscrepancyDevice, site: { ironicReports: boolean }): FoundDiscrepancy[] {
  const found: FoundDiscrepancy[] = [];
  const inNetbox = d.netboxObservedAt !== null && !d.netboxMissing;
  const managed = d.deviceClass !== null && IRONIC_MANAGED_CLASSES.includes(d.deviceClass);
  if (inNetbox && d.netboxStatus === "active" && managed && site.ironicReports && d.ironicObservedAt === null)
    found.push({
      kind: "netbox_active_without_ironic_node",
      observed: { "netbox.status": "active", "ironic.node": null },
    });
  if (inNetbox && d.netboxStatus === "staged" && d.ironicProvisionState?.toLowerCase() === "available")
    found.push({
      kind: "ironic_available_netbox_staged",
      observed: { "netbox.status": "staged", "ironic.provisionState": "available", "ironic.node": d.ironicNodeUuid },
    });
  const slurmWords = [d.slurmState, ...d.slurmStateFlags].filter((w): w is string => w !== null);
  const drained = isSlurmDrained(d.slurmState, d.slurmStateFlags);
  const ours = d.slurmReason?.startsWith(CORDON_REASON_PREFIX) ?? false;
  if (d.slurmObservedAt !== null && drained && !ours && !d.cordoned)
    found.push({
      kind: "slurm_drained_externally",
      observed: { "slurm.state": slurmWords.join("+"), "slurm.reason": d.slurmReason, "hub.cordoned": "false" },
    });
  if (d.healthStatus === "critical" && !d.cordoned)
    found.push({
      kind: "health_critical_not_cordoned",
      observed: { "health.status": "critical", "hub.cordoned": "false" },
    });
  return found;
}

/** A pushed Ironic or SLURM item that matches no device; `key` is its name (or node UUID). */
export function unmatchedDiscrepancy(source: string, key: string): FoundDiscrepancy & { subject: string } {
  const kind: DiscrepancyKind = source === "slurm" ? "slurm_node_unmatched" : "ironic_node_unmatched";
  return { kind, subject: `${source}:${key}`, observed: { [`${source}.node`]: key, "hub.device": null } };
}

/** Sources whose unmatched items are discrepancies (NetBox creates devices; health items name devices). */
export const UNMATCHED_SOURCES: readonly string[] = ["ironic-overcloud", "ironic-undercloud", "slurm"];

export const DiscrepancySchema = z
  .object({
    id: Uuid.describe("Stable while the discrepancy stays open (for `unobserved`: the device id)"),
    siteId: Uuid,
    kind: DiscrepancyKind,
    deviceId: Uuid.nullable().describe("The device; null for an item that matches no device"),
    name: z.string().describe("The device's name, or the unmatched item's name"),
    observed: z
      .record(z.string(), z.string().nullable())
      .describe("The values the sources report, by `source.field`; null where a source has none"),
    since: Timestamp.describe("When the hub first saw the sources disagree this way (open since)"),
  })
  .meta({ id: "Discrepancy" });
export type Discrepancy = z.infer<typeof DiscrepancySchema>;

export const DiscrepancyListQuerySchema = PageQuery.extend({
  kind: DiscrepancyKind.optional().describe("Only this kind"),
});
export type DiscrepancyListQuery = z.infer<typeof DiscrepancyListQuerySchema>;

/** The fleet-wide list: the site list's filters, several sites and kinds at once, and a device name search. */
export const DiscrepancyFleetQuerySchema = PageQuery.extend({
  site: commaList(z.string().min(1).max(63))
    .optional()
    .describe("Comma-separated site slugs or ids; an unknown one is a 400"),
  kind: commaList(DiscrepancyKind, DISCREPANCY_KINDS.length)
    .optional()
    .describe(`Comma-separated kinds: ${DISCREPANCY_KINDS.join(", ")}`),
  name: z
    .string()
    .max(200)
    .optional()
    .describe("Case-insensitive substring of the device's (or unmatched item's) name"),
});
export type DiscrepancyFleetQuery = z.infer<typeof DiscrepancyFleetQuerySchema>;

export const DiscrepancyListSchema = listOf(DiscrepancySchema).meta({ id: "DiscrepancyList" });
export type DiscrepancyList = z.infer<typeof DiscrepancyListSchema>;

export const DiscrepancySummarySchema = z
  .object({
    total: z.number().int(),
    byKind: z.record(DiscrepancyKind, z.number().int()).describe("Every kind, zero included"),
    sites: z
      .array(
        z.object({
          siteId: Uuid,
          slug: z.string(),
          total: z.number().int(),
          byKind: z
            .partialRecord(DiscrepancyKind, z.number().int())
            .describe("The site's open kinds (a kind absent: none open)"),
        }),
      )
      .describe("Sites with at least one open discrepancy, by slug"),
  })
  .meta({ id: "DiscrepancySummary" });
export type DiscrepancySummary = z.infer<typeof DiscrepancySummarySchema>;
