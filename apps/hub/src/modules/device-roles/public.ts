/**
 * What other modules may use of the device roles and types: their representation, and the rows
 * the reflections (NetBox's roles and types), the NetBox settings (a role's class), the SLURM
 * bootstrap (a role's existence) and the feed (snapshots) read or write.
 */
import { deviceRoleRepo, type DeviceRoleRepo } from "./repo.ts";

export { toDeviceRole } from "./service.ts";
export type { DeviceRoleRow, DeviceTypeRow } from "./repo.ts";

export const deviceRoleRows: Pick<
  DeviceRoleRepo,
  | "allRolesCounted"
  | "findRoleBySlug"
  | "updateRole"
  | "createRoleIfAbsent"
  | "createTypeIfAbsent"
  | "findTypeBySlug"
  | "updateType"
  | "roleExists"
> = deviceRoleRepo;
