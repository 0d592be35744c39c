/**
 * The NetBox writes of a node swap, each looking before it acts so that a rerun reuses what an
 * earlier attempt wrote (a MAC address object, a primary MAC, a rack position) and sends nothing
 * NetBox already holds. Shapes at NetBox 4.5.0 (netbox-community/netbox, tag v4.5.0):
 * - `netbox/dcim/models/devices.py` `MACAddress` (no uniqueness on `mac_address`: NetBox stores
 *   the same MAC twice, so the lookup is what keeps duplicates out) and
 *   `netbox/dcim/api/serializers_/device_components.py` `MACAddressSerializer`
 *   (`mac_address`, `assigned_object_type`, `assigned_object_id`);
 * - `netbox/dcim/filtersets.py` `MACAddressFilterSet.mac_address` (MultiValueMACAddressFilter);
 * - `netbox/dcim/models/device_components.py` `BaseInterface.primary_mac_address` (a
 *   OneToOneField written as the MAC object's id; `clean()` refuses one assigned elsewhere);
 * - `netbox/dcim/api/serializers_/devices.py` `DeviceSerializer` `location`, `rack` (ids),
 *   `position` (decimal, U), `face` (choice, blank allowed), and `Device.clean()`.
 */
import { canonicalMac } from "@fm/domain";
import type { CableMovePlan, RackPlacePlan } from "@fm/domain/workflows";
import type { NetboxClient } from "./netbox-client.ts";
import {
  NetboxCableSchema,
  NetboxDeviceSchema,
  NetboxInterfaceSchema,
  NetboxMacAddressSchema,
  type NetboxCable,
  type NetboxDevice,
  type NetboxMacAddress,
} from "./schemas.ts";

/** A swap step NetBox's data refuses (not NetBox itself): final, retrying changes nothing. */
export class SwapRefusedError extends Error {
  override name = "SwapRefusedError";
}

export type InterfaceMacResult =
  | { outcome: "created" | "reused"; mac: NetboxMacAddress }
  /** The MAC is recorded on another interface (or on no interface): refused, nothing written. */
  | { outcome: "elsewhere"; records: NetboxMacAddress[] };

/**
 * Makes `mac` a dcim.macaddress object assigned to interface `interfaceId`: reused when one is
 * already assigned there, refused when NetBox records it anywhere else, else created.
 */
export async function ensureInterfaceMac(
  client: NetboxClient,
  interfaceId: number,
  mac: string,
): Promise<InterfaceMacResult> {
  const value = canonicalMac(mac);
  if (!value) throw new SwapRefusedError(`not a MAC address: ${JSON.stringify(mac)}`);
  const found = await client.macAddresses({ mac_address: value });
  const here = found.find((m) => m.assigned_object_type === "dcim.interface" && m.assigned_object_id === interfaceId);
  if (here) return { outcome: "reused", mac: here };
  if (found.length) return { outcome: "elsewhere", records: found };
  const created = await client.create("dcim/mac-addresses", NetboxMacAddressSchema, {
    mac_address: value,
    assigned_object_type: "dcim.interface",
    assigned_object_id: interfaceId,
  });
  return { outcome: "created", mac: created };
}

/** Sets the interface's primary MAC to the MAC object `macId`; false when it already was. */
export async function setPrimaryMac(client: NetboxClient, interfaceId: number, macId: number): Promise<boolean> {
  const iface = await client.interface(interfaceId);
  if (iface.primary_mac_address?.id === macId) return false;
  await client.patch("dcim/interfaces", interfaceId, NetboxInterfaceSchema, { primary_mac_address: macId });
  return true;
}

/** Where a device sits: its location, rack, lowest unit and face (all null when unracked). */
export type RackPlace = RackPlacePlan;

export const placeOf = (d: NetboxDevice): RackPlace => ({
  location: d.location?.id ?? null,
  rack: d.rack?.id ?? null,
  position: d.position,
  face: d.face?.value ?? null,
});

/**
 * Puts the device at `place` (and `status`, when given), in one PATCH of what differs; false
 * when NetBox already has it. Unracking sends `face: ""`, the blank NetBox's face field takes.
 */
export async function placeDevice(
  client: NetboxClient,
  id: number,
  place: RackPlace,
  status?: string,
): Promise<boolean> {
  const device = await client.device(id);
  const now = placeOf(device);
  const body: Record<string, unknown> = {};
  if (now.location !== place.location) body.location = place.location;
  if (now.rack !== place.rack) body.rack = place.rack;
  if (now.position !== place.position) body.position = place.position;
  if (now.face !== place.face) body.face = place.face ?? "";
  if (status && device.status.value !== status) body.status = status;
  if (!Object.keys(body).length) return false;
  await client.patch("dcim/devices", id, NetboxDeviceSchema, body);
  return true;
}

/**
 * One cable of a failed tray, as a swap moves it onto the spare (`CableMovePlan` in
 * @fm/domain/workflows). Shapes: `netbox/dcim/api/serializers_/cables.py` `CableSerializer` at
 * v4.5.0 (`a_terminations`/`b_terminations` as `{object_type, object_id}`).
 */
export type CableMove = CableMovePlan;

/** The cables on the failed tray's interfaces (`ifaces`: its interface ids by name), as moves. */
export function cableMovesOf(cables: NetboxCable[], ifaces: Map<number, string>): CableMove[] {
  return cables.flatMap((c) => {
    const onA = c.a_terminations.find((t) => t.object_type === "dcim.interface" && ifaces.has(t.object_id));
    const onB = c.b_terminations.find((t) => t.object_type === "dcim.interface" && ifaces.has(t.object_id));
    const mine = onA ?? onB;
    if (!mine) return [];
    const far = (onA ? c.b_terminations : c.a_terminations).map((t) => ({
      object_type: t.object_type,
      object_id: t.object_id,
    }));
    return [
      {
        cableId: c.id,
        iface: ifaces.get(mine.object_id)!,
        end: onA ? ("A" as const) : ("B" as const),
        far,
        status: c.status.value,
        type: c.type || null,
        label: c.label,
        color: c.color,
        length: c.length,
        lengthUnit: c.length_unit?.value ?? null,
        description: c.description,
      },
    ];
  });
}

/**
 * Moves one cable onto the spare's interface: deletes the failed tray's cable (one already gone
 * counts as deleted) and creates one from the spare's interface to the same far end with the same
 * attributes. "already" when the spare's interface already has that cable (a retry or rerun).
 */
export async function moveCable(
  client: NetboxClient,
  move: CableMove,
  spareIfaceId: number,
): Promise<"moved" | "already"> {
  const iface = await client.interface(spareIfaceId);
  if (iface.cable) {
    const [cable] = await client.cables({ id: iface.cable.id });
    const other =
      cable &&
      (cable.a_terminations.some((t) => t.object_id === spareIfaceId) ? cable.b_terminations : cable.a_terminations);
    const same =
      other &&
      other.length === move.far.length &&
      move.far.every((f) => other.some((t) => t.object_type === f.object_type && t.object_id === f.object_id));
    if (!same)
      throw new SwapRefusedError(`${iface.name} of the spare is already cabled elsewhere (cable ${iface.cable.id})`);
    await client.delete("dcim/cables", move.cableId);
    return "already";
  }
  await client.delete("dcim/cables", move.cableId);
  const spareEnd = [{ object_type: "dcim.interface", object_id: spareIfaceId }];
  await client.create("dcim/cables", NetboxCableSchema, {
    a_terminations: move.end === "A" ? spareEnd : move.far,
    b_terminations: move.end === "A" ? move.far : spareEnd,
    status: move.status,
    ...(move.type ? { type: move.type } : {}),
    label: move.label,
    color: move.color,
    ...(move.length !== null ? { length: move.length, length_unit: move.lengthUnit } : {}),
    description: move.description,
  });
  return "moved";
}
