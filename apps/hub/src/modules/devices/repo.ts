/**
 * The only code that reads or writes the device tables, in four parts: rows, locks and history
 * (repo/rows.ts), the read-optimised list (repo/list.ts), bulk writes (repo/bulk.ts) and the
 * observation stamps (repo/observations.ts). `deviceRepo` is all of them, as the service calls it.
 */
import { bulkWrites } from "./repo/bulk.ts";
import { deviceList } from "./repo/list.ts";
import { observationStamps } from "./repo/observations.ts";
import { deviceRows } from "./repo/rows.ts";

export { analyzeInventory, type BulkColumn } from "./repo/bulk.ts";
export {
  deviceWhere,
  freshWhere,
  staleWhere,
  wholeSiteOf,
  type DeviceBriefRow,
  type DeviceFilter,
  type DeviceJsonRow,
  type DevicePage,
} from "./repo/list.ts";
export { withObservations } from "./repo/observations.ts";
export { DEVICE_INCLUDE, type DeviceHistoryRow, type DeviceRow } from "./repo/rows.ts";

export const deviceRepo = { ...deviceList, ...deviceRows, ...bulkWrites, ...observationStamps };
export type DeviceRepo = typeof deviceRepo;
