/** Observations for the status and condition tables: a baseline device and builders per source. */
import type { Condition } from "./device-conditions.ts";
import type { DeviceObservations } from "./device-observations.ts";
import { deriveDeviceStatus } from "./device-status.ts";

export const NOW = new Date("2025-06-01T12:00:00.000Z");
export const STALE_MS = 10 * 60_000;
export const ago = (ms: number) => new Date(NOW.getTime() - ms);
export const RECENT = ago(60_000);
export const OLD = ago(STALE_MS + 1);

export type Ironic = NonNullable<DeviceObservations["ironic"]>;
export type Slurm = NonNullable<DeviceObservations["slurm"]>;
export type Health = NonNullable<DeviceObservations["health"]>;

export const ironic = (over: Partial<Ironic> = {}): Ironic => ({
  provisionState: "available",
  targetProvisionState: null,
  powerState: "power off",
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
  observedAt: RECENT,
  ...over,
});
export const slurm = (state: string | null, flags: string[] = [], over: Partial<Slurm> = {}): Slurm => ({
  state,
  flags,
  reason: null,
  observedAt: RECENT,
  ...over,
});
export const health = (status: Health["status"], over: Partial<Health> = {}): Health => ({
  status,
  conditions: [],
  observedAt: RECENT,
  ...over,
});

/** Baseline: NetBox says active and nothing else has observed the device. */
export function obs(
  over: Partial<Omit<DeviceObservations, "netbox">> & { netbox?: Partial<DeviceObservations["netbox"]> } = {},
): DeviceObservations {
  const { netbox, ...rest } = over;
  return {
    netbox: { status: "active", missing: false, observedAt: RECENT, ...netbox },
    ironic: null,
    slurm: null,
    health: null,
    operator: { cordoned: false, cordonReason: null },
    activeJobKind: null,
    ...rest,
  };
}
export const cordon = { cordoned: true, cordonReason: "RMA ticket 42" };

export const derive = (o: DeviceObservations, previous?: Condition[] | null) =>
  deriveDeviceStatus(o, { now: NOW, staleAfterMs: STALE_MS, previous });
export const cond = (o: DeviceObservations, type: Condition["type"]) =>
  derive(o).conditions.find((c) => c.type === type);
