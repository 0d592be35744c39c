import { z } from "zod";
import { Slug, Timestamp, Uuid, PageQuery, listOf } from "./common.ts";

const SiteName = z.string().trim().min(1).max(200);
const Region = z.string().trim().min(1).max(100);
const NetboxId = z.number().int().positive();

export const SiteSchema = z
  .object({
    id: Uuid,
    slug: Slug.describe("Fleet Manager / NetBox site slug, e.g. keflavik"),
    name: z.string(),
    region: z.string().nullable().describe("Topology-service region; null when the site is not a topology target"),
    netboxSiteId: z.number().int().nullable(),
    netboxClusterId: z.number().int().nullable(),
    slurmEnabled: z.boolean().describe("The site runs the SLURM integration (burn-in, release SLURM step)"),
    configureDhcp: z.boolean().describe("Enrolment configures DHCP; off where DHCP is managed externally"),
    platformClassActivityReady: z.boolean().describe("Enrolment writes NetBox custom_fields.platform_class"),
    impairmentHold: z
      .object({ since: Timestamp, message: z.string() })
      .nullable()
      .describe(
        "Set while impairment cordons are due but would exceed the site's limit (IMPAIRMENT_MAX_SITE_FRACTION): none is made",
      ),
    version: z.number().int().describe("Increases with every change; the ETag is derived from it"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "Site" });
export type Site = z.infer<typeof SiteSchema>;

export const SiteCreateSchema = z
  .strictObject({
    slug: Slug,
    name: SiteName,
    region: Region.nullable().optional(),
    netboxSiteId: NetboxId.nullable().optional(),
    netboxClusterId: NetboxId.nullable().optional(),
    slurmEnabled: z.boolean().optional(),
    configureDhcp: z.boolean().optional(),
    platformClassActivityReady: z.boolean().optional(),
  })
  .meta({ id: "SiteCreate" });
export type SiteCreate = z.infer<typeof SiteCreateSchema>;

/** The slug is an identity other systems key on (NetBox, charts, runbooks): it cannot change. */
export const SitePatchSchema = SiteCreateSchema.omit({ slug: true })
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: "at least one field is required" })
  .meta({ id: "SitePatch" });
export type SitePatch = z.infer<typeof SitePatchSchema>;

export const SiteListQuerySchema = PageQuery.extend({
  slug: Slug.optional().describe("Exact slug"),
  region: z.string().max(100).optional(),
  q: z.string().max(200).optional().describe("Case-insensitive substring of slug or name"),
});
export type SiteListQuery = z.infer<typeof SiteListQuerySchema>;

export const SiteListSchema = listOf(SiteSchema).meta({ id: "SiteList" });
export type SiteList = z.infer<typeof SiteListSchema>;
