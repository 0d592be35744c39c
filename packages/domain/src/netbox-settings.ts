/**
 * The NetBox settings the hub holds for every site's netbox agent (rollout guide: "The NetBox
 * allowlist is hub configuration, not satellite configuration"): which NetBox clusters each site
 * ingests, and the NetBox device-role slug -> device-class mapping, which decides Ironic routing
 * and workflow eligibility. Agents read them from the hub, so a new cluster or role slug needs no
 * agent redeploy.
 */
import { z } from "zod";
import { Slug, Timestamp } from "./common.ts";
import { DeviceClass } from "./inventory.ts";

export const NetboxDeviceFilterSchema = z
  .strictObject({
    site: Slug.describe(
      "The Fleet Manager site (its slug is the NetBox site's); created when the hub has none, named from NetBox by its agent",
    ),
    clusters: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(100)
      .describe("NetBox virtualization clusters (names) whose devices at the site are ingested"),
  })
  .describe("The NetBox clusters one site ingests");
export type NetboxDeviceFilter = z.infer<typeof NetboxDeviceFilterSchema>;

/** Each site at most once, wherever the filters come from (the admin API, the hub's configuration). */
export const NetboxDeviceFiltersSchema = z
  .array(NetboxDeviceFilterSchema)
  .max(1000)
  .superRefine((filters, ctx) => {
    const seen = new Set<string>();
    filters.forEach((f, n) => {
      if (seen.has(f.site))
        ctx.addIssue({ code: "custom", path: [n, "site"], message: `site '${f.site}' is listed twice` });
      seen.add(f.site);
    });
  });

export const NetboxSettingsInputSchema = z
  .strictObject({
    deviceFilters: NetboxDeviceFiltersSchema,
    deviceRoleClassMapping: z
      .record(z.string().min(1).max(100), DeviceClass)
      .refine((m) => Object.keys(m).length <= 1000, "at most 1000 roles")
      .describe("NetBox device-role slug -> device class"),
  })
  .describe("The NetBox settings, as an admin replaces them");
export type NetboxSettingsInput = z.infer<typeof NetboxSettingsInputSchema>;

export const NetboxSettingsSchema = z
  .object({
    deviceFilters: z.array(NetboxDeviceFilterSchema),
    deviceRoleClassMapping: z.record(z.string(), DeviceClass),
    version: z.number().int(),
    updatedAt: Timestamp,
  })
  .meta({ id: "NetboxSettings" });
export type NetboxSettings = z.infer<typeof NetboxSettingsSchema>;

export const EMPTY_NETBOX_SETTINGS: NetboxSettingsInput = { deviceFilters: [], deviceRoleClassMapping: {} };
