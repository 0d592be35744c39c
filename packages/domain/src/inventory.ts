import { z } from "zod";
import { PageQuery, Uuid, listOf } from "./common.ts";

export const DEVICE_CLASSES = [
  "GPU_COMPUTE",
  "CPU_BAREMETAL",
  "CPU_HYPERVISOR",
  "NETWORK",
  "STORAGE",
  "OTHER",
] as const;
export const DeviceClass = z.enum(DEVICE_CLASSES);
export type DeviceClass = z.infer<typeof DeviceClass>;

export const CPU_ARCHITECTURES = ["x86_64", "aarch64"] as const;
export const CpuArchitecture = z.enum(CPU_ARCHITECTURES);

/** NetBox 4.x dcim.device status choices. */
export const NETBOX_DEVICE_STATUSES = [
  "planned",
  "staged",
  "active",
  "offline",
  "failed",
  "inventory",
  "decommissioning",
] as const;
export const NetboxDeviceStatus = z.enum(NETBOX_DEVICE_STATUSES);
export type NetboxDeviceStatus = z.infer<typeof NetboxDeviceStatus>;

/** The Ironic instances a site can have: tenant bare metal, and the hypervisors' own. */
export const IRONIC_INSTANCES = ["overcloud", "undercloud"] as const;
export const IronicInstance = z.enum(IRONIC_INSTANCES);
export type IronicInstance = z.infer<typeof IronicInstance>;

/** Which Ironic instance manages devices of a class (rollout guide, "Dual-Ironic Deployments"). */
export function ironicInstanceFor(deviceClass: DeviceClass): IronicInstance | null {
  if (deviceClass === "GPU_COMPUTE" || deviceClass === "CPU_BAREMETAL") return "overcloud";
  if (deviceClass === "CPU_HYPERVISOR") return "undercloud";
  return null;
}

/**
 * The Ironic `resource_class` of a node enrolled for a device of this class: the class's own name.
 * Nova's Ironic driver reports it to Placement as CUSTOM_<NAME> (upper case, other characters as
 * `_`), so a flavor asks for `resources:CUSTOM_GPU_COMPUTE=1`. One resource class per device class
 * keeps a GPU tray from filling a CPU flavor; the CPU architecture is not in it (x86 and ARM
 * CPU_BAREMETAL nodes share one), which is why SLURM images are chosen by device role instead.
 * Null for the classes no Ironic manages.
 */
export function ironicResourceClassFor(deviceClass: DeviceClass): string | null {
  return ironicInstanceFor(deviceClass) ? deviceClass : null;
}

export const DeviceRoleSchema = z
  .object({
    id: Uuid,
    slug: z.string(),
    name: z.string(),
    deviceClass: DeviceClass,
    netboxId: z.number().int().nullable(),
    inUse: z.boolean().describe("Some device (at ?site= when given) has this role"),
    deviceCount: z.number().int().describe("Devices with this role (at ?site= when given)"),
  })
  .meta({ id: "DeviceRole" });
export type DeviceRole = z.infer<typeof DeviceRoleSchema>;

export const DeviceRoleListQuerySchema = PageQuery.extend({
  site: z.string().max(63).optional().describe("Site slug or id: inUse and deviceCount are counted at this site"),
  inUse: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
  deviceClass: DeviceClass.optional(),
});
export type DeviceRoleListQuery = z.infer<typeof DeviceRoleListQuerySchema>;
export const DeviceRoleListSchema = listOf(DeviceRoleSchema).meta({ id: "DeviceRoleList" });
export type DeviceRoleList = z.infer<typeof DeviceRoleListSchema>;

export const DeviceTypeSchema = z
  .object({
    id: Uuid,
    slug: z.string(),
    manufacturer: z.string(),
    model: z.string(),
    cpuArchitecture: CpuArchitecture,
    netboxId: z.number().int().nullable(),
  })
  .meta({ id: "DeviceType" });
export type DeviceType = z.infer<typeof DeviceTypeSchema>;
export const DeviceTypeListSchema = listOf(DeviceTypeSchema).meta({ id: "DeviceTypeList" });
export type DeviceTypeList = z.infer<typeof DeviceTypeListSchema>;

export const InterfaceSchema = z
  .object({
    name: z.string(),
    type: z.string().nullable(),
    macAddress: z.string().nullable(),
    ibGuid: z.string().nullable().describe("InfiniBand port GUID"),
    mgmtOnly: z.boolean(),
    peerDevice: z.string().nullable().describe("Cable peer device name"),
    peerInterface: z.string().nullable(),
  })
  .meta({ id: "DeviceInterface" });
