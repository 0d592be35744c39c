/**
 * Where a device's columns live: its own row in `devices`, and the time each source last listed it
 * in `device_observations` (a push stamps thousands of those; keeping them apart spares the wide
 * device row a rewrite). Every statement that reads a device across both tables takes the split from
 * here: the devices module's repo, the discrepancy kinds' site read, the reflections' bulk writes.
 */
import type { Prisma } from "../generated/prisma/client.ts";

/** When each source last listed a device: its device_observations row, read with the device. */
export const OBSERVED_FIELDS = ["netboxObservedAt", "ironicObservedAt", "slurmObservedAt", "healthObservedAt"] as const;
export type ObservedField = (typeof OBSERVED_FIELDS)[number];
export type Observed = Record<ObservedField, Date | null>;
export const isObservedField = (f: string): f is ObservedField => (OBSERVED_FIELDS as readonly string[]).includes(f);

/** A device's own columns and its observation times. */
export type DeviceBase = Prisma.DeviceGetPayload<object> & Observed;
