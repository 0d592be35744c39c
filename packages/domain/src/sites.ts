import { z } from "zod";
import { NetboxId, Slug, Timestamp, Uuid, PageQuery, listOf } from "./common.ts";

const SiteName = z.string().trim().min(1).max(200);
const Region = z.string().trim().min(1).max(100);

export const SiteSourceSchema = z.object({
  source: z.string().describe("Reflection source: netbox, ironic-overcloud, ironic-undercloud, slurm or health"),
  lastAcceptedAt: Timestamp.describe("When the hub last accepted a reflection of this source for the site"),
  silenceSeconds: z.number().int().describe("Seconds since then, as of the response"),
  silent: z.boolean().describe("Silent for longer than the hub's window (FM_SITE_SILENCE_AFTER_S)"),
});
export type SiteSource = z.infer<typeof SiteSourceSchema>;

export const SiteConditionSchema = z.object({
  type: z.literal("Reporting"),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.enum(["AllSourcesReporting", "SourceSilent", "NoReflections"]),
  message: z.string(),
});
export type SiteCondition = z.infer<typeof SiteConditionSchema>;

export const SiteRecordSchema = z
  .object({
    id: Uuid,
    slug: Slug.describe("Fleet Manager / NetBox site slug, e.g. keflavik"),
    name: z.string(),
    region: z.string().nullable().describe("Topology-service region; null when the site is not a topology target"),
    netboxSiteId: z.number().int().nullable(),
    netboxClusterId: z.number().int().nullable(),
    slurmEnabled: z.boolean().describe("The site has a SLURM cluster: burn-in runs there"),
    openstackSlurmEnabled: z
      .boolean()
      .describe(
        "SLURM reached through OpenStack (Nova), the rollout guide's openstack.slurm.enabled: SLURM adoption and the release's SLURM step. Needs slurmEnabled; a standalone-Ironic site with SLURM keeps it false",
      ),
    configureDhcp: z.boolean().describe("Enrolment configures DHCP; off where DHCP is managed externally"),
    platformClassActivityReady: z.boolean().describe("Enrolment writes NetBox custom_fields.platform_class"),
    impairmentHold: z
      .object({ since: Timestamp, message: z.string() })
      .nullable()
      .describe(
        "Set while impairment cordons are due but would exceed the site's limit (FM_IMPAIRMENT_MAX_SITE_FRACTION): none is made",
      ),
    version: z.number().int().describe("Increases with every change; the ETag is derived from it"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "SiteRecord" });
/** A site's own fields: what the audit log and the feed record of a change. */
export type SiteRecord = z.infer<typeof SiteRecordSchema>;

/** The API's site: its fields, and what the hub derives when asked (its sources' silence). */
export const SiteSchema = SiteRecordSchema.extend({
  sources: z
    .array(SiteSourceSchema)
    .describe("Each source the hub has accepted a reflection of for this site, with its silence"),
  conditions: z.array(SiteConditionSchema).describe("Reporting: False once a source is silent"),
}).meta({ id: "Site" });
export type Site = z.infer<typeof SiteSchema>;

export const SiteCreateSchema = z
  .strictObject({
    slug: Slug,
    name: SiteName,
    region: Region.nullable().optional(),
    netboxSiteId: NetboxId.nullable().optional(),
    netboxClusterId: NetboxId.nullable().optional(),
    slurmEnabled: z.boolean().optional(),
    openstackSlurmEnabled: z.boolean().optional(),
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

/**
 * Why a site with these flags is incoherent, or null: SLURM through Nova is SLURM, so
 * openstackSlurmEnabled needs slurmEnabled (the database holds the same rule).
 */
export function siteFlagsRefusal(flags: { slurmEnabled: boolean; openstackSlurmEnabled: boolean }): string | null {
  return flags.openstackSlurmEnabled && !flags.slurmEnabled
    ? "openstackSlurmEnabled (SLURM reached through OpenStack) needs slurmEnabled: a site without SLURM cannot reach it through Nova"
    : null;
}

/** A device no source has observed for this long is STALE unless FM_STALE_AFTER_S says otherwise (10 min). */
export const DEFAULT_STALE_AFTER_MS = 10 * 60_000;

/**
 * A site's silence is judged against this window unless FM_SITE_SILENCE_AFTER_S says otherwise:
 * the staleness window, so a site whose sources went quiet turns silent no later than its
 * devices turn STALE (a longer window would show the site "reporting" over STALE devices).
 */
export const DEFAULT_SITE_SILENCE_AFTER_MS = DEFAULT_STALE_AFTER_MS;

/**
 * Why a silence window and a staleness window contradict each other, or null: a silence window
 * longer than the staleness window leaves a site "reporting" while every device it pushed is STALE.
 */
export function siteSilenceRefusal(silenceAfterMs: number, staleAfterMs: number): string | null {
  return silenceAfterMs > staleAfterMs
    ? `a site silence window of ${silenceAfterMs / 1000} s is longer than the staleness window (${staleAfterMs / 1000} s): a site would show as reporting while all its devices are STALE`
    : null;
}

/** When the hub last accepted a reflection of one source for a site. */
export interface SourcePush {
  source: string;
  appliedAt: Date;
}

/** Each source that has ever pushed for the site, with its silence as of `now` (never negative). */
export function siteSources(pushes: SourcePush[], now: Date, silenceAfterMs: number): SiteSource[] {
  return [...pushes]
    .sort((a, b) => a.source.localeCompare(b.source))
    .map((p) => {
      const silenceMs = Math.max(0, now.getTime() - p.appliedAt.getTime());
      return {
        source: p.source,
        lastAcceptedAt: p.appliedAt.toISOString(),
        silenceSeconds: Math.floor(silenceMs / 1000),
        silent: silenceMs > silenceAfterMs,
      };
    });
}

/**
 * The site's Reporting condition: False (SourceSilent) once a source that has pushed for the
 * site has been silent for longer than the window, so a site whose agents went quiet shows in
 * the hub even when the satellite's own monitoring went with them. Unknown before any push.
 */
export function siteReporting(sources: SiteSource[], silenceAfterMs: number): SiteCondition {
  const window = `${Math.floor(silenceAfterMs / 1000)}s`;
  if (!sources.length)
    return {
      type: "Reporting",
      status: "Unknown",
      reason: "NoReflections",
      message: "The hub has not accepted a reflection for this site",
    };
  const silent = sources.filter((s) => s.silent);
  if (!silent.length)
    return {
      type: "Reporting",
      status: "True",
      reason: "AllSourcesReporting",
      message: `${sources.map((s) => s.source).join(", ")} reported within ${window}`,
    };
  const list = silent.map((s) => `${s.source} silent for ${s.silenceSeconds}s`).join(", ");
  return { type: "Reporting", status: "False", reason: "SourceSilent", message: `${list} (window ${window})` };
}
