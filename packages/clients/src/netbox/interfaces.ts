/**
 * What an interface says about itself beyond its own fields: its MAC address (NetBox 4.2+ keeps
 * MACs as dcim.macaddress objects) and its cable peer. Shared by the NetBox agent (the hub's view
 * of a device's interfaces) and the Temporal worker (Ironic ports from them).
 */
import type { NetboxInterface } from "./schemas.ts";

export interface NetboxPeer {
  /** The peer interface's device, by NetBox id and name. */
  deviceId: number;
  device: string;
  /** The peer interface's name. */
  name: string;
}

/** The interface at the far end of `ends`, when it is one (a brief interface with its device). */
function interfacePeer(type: string | null | undefined, ends: unknown[] | null | undefined): NetboxPeer | null {
  if (type !== "dcim.interface") return null;
  const p = ends?.[0] as { name?: unknown; device?: { id?: unknown; name?: unknown } } | undefined;
  return p && typeof p.name === "string" && typeof p.device?.name === "string" && typeof p.device.id === "number"
    ? { deviceId: p.device.id, device: p.device.name, name: p.name }
    : null;
}

/**
 * An interface's cable peer: the interface its cable reaches (`link_peers`), else the interface
 * at the end of its path through patch panels (`connected_endpoints`; `link_peers` are then the
 * panel's front port).
 */
export function peerOf(iface: NetboxInterface): NetboxPeer | null {
  return (
    interfacePeer(iface.link_peers_type, iface.link_peers) ??
    interfacePeer(iface.connected_endpoints_type, iface.connected_endpoints)
  );
}

/** The primary MAC; else (NetBox 4.2+ keeps MACs apart) the first MAC assigned to the interface. */
export function macOf(iface: NetboxInterface): string | null {
  return iface.primary_mac_address?.mac_address ?? iface.mac_address ?? iface.mac_addresses?.[0]?.mac_address ?? null;
}
