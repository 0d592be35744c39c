/** Sites, devices and feed events as the hub sends them, for the connector's unit tests. */
import { randomUUID } from "node:crypto";
import {
  DeviceSchema,
  InventoryEventSchema,
  SiteRecordSchema,
  type Device,
  type InventoryEvent,
  type SiteRecord,
} from "@fm/domain";

const T = "2026-11-02T10:00:00.000Z";

export function site(slug: string, over: Partial<SiteRecord> = {}): SiteRecord {
  return SiteRecordSchema.parse({
    id: randomUUID(),
    slug,
    name: slug.toUpperCase(),
    region: "ap-southeast",
    netboxSiteId: null,
    netboxClusterId: null,
    slurmEnabled: false,
    openstackSlurmEnabled: false,
    configureDhcp: true,
    platformClassActivityReady: false,
    impairmentHold: null,
    version: 1,
    createdAt: T,
    updatedAt: T,
    ...over,
  });
}

export function device(at: SiteRecord, name: string, over: Partial<Device> = {}): Device {
  return DeviceSchema.parse({
    id: randomUUID(),
    name,
    site: { id: at.id, slug: at.slug },
    serial: `SN-${name}`,
    assetTag: null,
    rack: { id: randomUUID(), name: "R01", position: 12 },
    deviceType: { id: randomUUID(), slug: "hgx-h100", model: "HGX H100", cpuArchitecture: "x86_64" },
    role: { id: randomUUID(), slug: "gpu-node", deviceClass: "GPU_COMPUTE" },
    platformClass: null,
    burnIn: null,
    tags: [],
    bmcAddress: null,
    interfaces: [],
    netbox: { id: 7, status: "active", missing: false, observedAt: T },
    ironic: {
      instance: null,
      nodeUuid: null,
      provisionState: "available",
      targetProvisionState: null,
      powerState: "power off",
      maintenance: false,
      maintenanceReason: null,
      lastError: null,
      fault: null,
      observedAt: T,
    },
    slurm: { nodeName: null, state: null, stateFlags: [], reason: null, partitions: [], observedAt: null },
    health: { status: null, conditions: [], observedAt: null },
    cordoned: false,
    cordonReason: null,
    cordonedBy: null,
    cordonedAt: null,
    cordonSource: null,
    notes: null,
    operationalStatus: "AVAILABLE",
    conditions: [],
    stale: false,
    version: 3,
    createdAt: T,
    updatedAt: T,
    ...over,
  });
}

export function event(
  position: number,
  type: InventoryEvent["type"],
  data: unknown,
  siteId: string | null,
): InventoryEvent {
  return InventoryEventSchema.parse({
    position: String(position),
    type,
    resourceType: type.split(".")[0],
    resourceId: (data as { id: string }).id,
    siteId,
    data,
    requestId: null,
    occurredAt: T,
  });
}
