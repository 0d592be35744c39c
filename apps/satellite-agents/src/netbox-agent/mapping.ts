/**
 * NetBox objects → the hub's NetBox reflection item (domain `NetboxItemSchema`). Pure, so the
 * mapping is tested on recorded NetBox shapes without a server.
 */
import { DEVICE_CLASSES, NETBOX_DEVICE_STATUSES, parseIbGuid, type DeviceClass, type NetboxItem } from "@fm/domain";
import { macOf, peerOf, type NetboxDevice, type NetboxDeviceType, type NetboxInterface } from "@fm/clients";
import { z } from "zod";

/** NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: `{"gpu-node": "GPU_COMPUTE", ...}` by role slug. */
export const RoleClassMapping = z
  .string()
  .default("{}")
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a JSON object of role slug → device class" });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().min(1), z.enum(DEVICE_CLASSES)));
export type RoleClassMapping = z.infer<typeof RoleClassMapping>;

const ARM = /gb[23]00|grace|aarch64|arm64|altra|ampere/i;

/**
 * NetBox has no CPU architecture field: a `cpu_architecture` custom field on the device type
 * wins; otherwise the model tells (Grace-based trays are aarch64); otherwise x86_64.
 */
export function cpuArchitectureOf(
  type: Pick<NetboxDeviceType, "model" | "slug" | "custom_fields"> | undefined,
): "x86_64" | "aarch64" {
  const declared = type?.custom_fields?.["cpu_architecture"];
  if (declared === "x86_64" || declared === "aarch64") return declared;
  return type && (ARM.test(type.model) || ARM.test(type.slug)) ? "aarch64" : "x86_64";
}

export interface MapContext {
  roles: RoleClassMapping;
  deviceTypes: Map<number, NetboxDeviceType>;
  /** BMC address by device id, from IP addresses on its management interface. */
  mgmtIps: Map<number, string>;
}

export type MapOutcome = { item: NetboxItem } | { skipped: string; reason: string };

const stripPrefix = (address: string) => address.split("/")[0]!;

export function toNetboxItem(device: NetboxDevice, interfaces: NetboxInterface[], ctx: MapContext): MapOutcome {
  if (!device.name) return { skipped: `#${device.id}`, reason: "unnamed device" };
  const status = device.status.value;
  if (!(NETBOX_DEVICE_STATUSES as readonly string[]).includes(status))
    return { skipped: device.name, reason: `status '${status}' is not one of NetBox's standard device statuses` };
  const deviceClass: DeviceClass = ctx.roles[device.role.slug] ?? "OTHER";
  const type = ctx.deviceTypes.get(device.device_type.id);
  const platformClass = device.custom_fields["platform_class"];
  return {
    item: {
      netboxId: device.id,
      name: device.name.slice(0, 200),
      serial: device.serial ? device.serial.slice(0, 100) : null,
      assetTag: device.asset_tag ? device.asset_tag.slice(0, 100) : null,
      status: status as NetboxItem["status"],
      role: { slug: device.role.slug, name: device.role.name, netboxId: device.role.id, deviceClass },
      deviceType: {
        slug: device.device_type.slug,
        manufacturer: device.device_type.manufacturer.name,
        model: device.device_type.model,
        cpuArchitecture: cpuArchitectureOf(
          type ?? { model: device.device_type.model, slug: device.device_type.slug, custom_fields: {} },
        ),
        netboxId: device.device_type.id,
      },
      location: device.location
        ? { slug: device.location.slug, name: device.location.name, netboxId: device.location.id }
        : null,
      rack: device.rack ? { name: device.rack.name, netboxId: device.rack.id } : null,
      rackPosition: device.position ?? null,
      platformClass: typeof platformClass === "string" && platformClass ? platformClass : null,
      tags: device.tags.map((t) => t.slug),
      bmcAddress: device.oob_ip ? stripPrefix(device.oob_ip.address) : (ctx.mgmtIps.get(device.id) ?? null),
      interfaces: interfaces.map((i) => {
        const peer = peerOf(i);
        const mac = macOf(i);
        return {
          name: i.name.slice(0, 64),
          type: i.type.value.slice(0, 50),
          macAddress: mac ? mac.toUpperCase() : null,
          // The InfiniBand port GUID `fleetctl netbox populate-ib-guids` writes into the label.
          ibGuid: parseIbGuid(i.label),
          mgmtOnly: i.mgmt_only,
          peerDevice: peer?.device.slice(0, 200) ?? null,
          peerInterface: peer?.name.slice(0, 64) ?? null,
          netboxId: i.id,
        };
      }),
    },
  };
}
