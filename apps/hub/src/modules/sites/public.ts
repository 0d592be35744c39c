/**
 * What other modules may use of the sites module: resolving a site from a slug or id (a 404 or
 * 422 problem naming the parameter when there is none), the site's representation, and the site
 * rows the reflections (a NetBox push updates its sites), the NetBox settings (sites it adopts),
 * the feed (snapshots) and satellites (their site lists) read or write.
 */
import { siteRepo, type SiteRepo } from "./repo.ts";

export { requireSite, resolveSiteId, resolveSiteIds, siteRef, unknownSite } from "./repo.ts";
export { siteFields, toSite } from "./service.ts";

export const siteRows: Pick<
  SiteRepo,
  "findBySlugs" | "allWithPushes" | "lockById" | "update" | "create" | "existingIds"
> = siteRepo;
