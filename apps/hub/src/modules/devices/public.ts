/**
 * What other modules may use of the devices module. Every change of a device's own fields goes
 * through the DeviceService, the device writer (`apply`, `applyMany`, `create`, `cordonByJob`:
 * status derivation, history, audit, feed, and the discrepancies that depend on the fields), which
 * app.ts injects into reflections, jobs and impairment. Around it, other modules may read and lock
 * device rows and stamp when a source last observed a device: `deviceRows` is that part of the
 * repo, and no more.
 */
import { deviceRepo, type DeviceRepo } from "./repo.ts";

export type { DeviceService } from "./service.ts";
export { differs } from "./service.ts";
export { storedStatus, toDevice } from "./state.ts";
export { analyzeInventory, withObservations, type BulkColumn, type DeviceRow } from "./repo.ts";

export const deviceRows: Pick<
  DeviceRepo,
  "findByIds" | "lockByIds" | "lockObservedAfter" | "markObserved" | "stampObserved"
> = deviceRepo;
