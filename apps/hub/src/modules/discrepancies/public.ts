/** What other modules may use of discrepancies: reconciling a site's, or the sites of reclassed roles', in their transaction. */
export { reconcileDiscrepancies, reconcileSitesOfRoles } from "./service.ts";
