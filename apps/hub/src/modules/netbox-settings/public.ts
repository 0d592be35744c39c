/** What other modules may use of the NetBox settings: the role → device class mapping a NetBox push applies. */
export { roleClassMapping } from "./service.ts";
export type { NetboxSettingsRepo } from "./repo.ts";
