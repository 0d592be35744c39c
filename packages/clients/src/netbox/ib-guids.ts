/**
 * InfiniBand port GUIDs into NetBox interface labels (`fleetctl netbox populate-ib-guids`).
 *
 * Where the GUIDs come from: the node's inspection inventory in Ironic (`GET
 * /v1/nodes/{node}/inventory`, ../ironic/ironic-inventory.ts), where the agent ramdisk reported
 * each InfiniBand port with its DHCP `client_id`, whose last 8 bytes are the port GUID
 * (`ibGuidFromClientId`, @fm/domain). NetBox has no GUID field; the label is where the site's
 * NetBox keeps it, and the netbox agent reads it back into the hub (`DeviceInterface.ibGuid`).
 *
 * Matching a port to the device's NetBox interface: the same name (the kernel's name, which a
 * site's NetBox uses for its IB ports), else the same MAC (IPA's "InfiniBand MAC" of the port),
 * else the interface whose label already holds this GUID. A label is written only when it holds
 * no GUID or another one; one holding the same GUID in another form is left as it is, and one
 * holding other text is never overwritten.
 */
import { ibGuidFromClientId, ibMacOfGuid, parseIbGuid } from "@fm/domain";
import type { IronicInventoryInterface } from "../ironic/ironic-inventory.ts";
import { macOf } from "./interfaces.ts";
import type { NetboxClient } from "./netbox-client.ts";
import type { NetboxInterface } from "./schemas.ts";

export type IbGuidAction =
  /** The label gets the GUID (it is empty or holds another GUID). */
  | "write"
  /** The label holds this GUID already. */
  | "unchanged"
  /** Left alone: the label holds text that is not a GUID. */
  | "other-label"
  /** No NetBox interface of the device matches the port, or it matches one another port took. */
  | "no-interface";

export interface IbGuidRow {
  device: string;
  /** The port's name in the inventory (the kernel's). */
  port: string;
  guid: string;
  /** The NetBox interface matched, and its label before any write. */
  interface: { id: number; name: string; label: string } | null;
  action: IbGuidAction;
}

/** The rows for one device: one per InfiniBand port of its inventory. Pure. */
export function planIbGuids(
  device: string,
  ports: readonly IronicInventoryInterface[],
  interfaces: readonly NetboxInterface[],
): IbGuidRow[] {
  const taken = new Set<number>();
  const rows: IbGuidRow[] = [];
  for (const port of ports) {
    const guid = port.client_id ? ibGuidFromClientId(port.client_id) : null;
    if (!guid) continue;
    const mac = (port.mac_address ?? ibMacOfGuid(guid)).toLowerCase();
    const free = interfaces.filter((i) => !taken.has(i.id));
    const match =
      free.find((i) => i.name === port.name) ??
      free.find((i) => macOf(i)?.toLowerCase() === mac) ??
      free.find((i) => parseIbGuid(i.label) === guid);
    if (!match) {
      rows.push({ device, port: port.name, guid, interface: null, action: "no-interface" });
      continue;
    }
    taken.add(match.id);
    const held = parseIbGuid(match.label);
    const action: IbGuidAction =
      held === guid ? "unchanged" : held !== null || match.label.trim() === "" ? "write" : "other-label";
    rows.push({
      device,
      port: port.name,
      guid,
      interface: { id: match.id, name: match.name, label: match.label },
      action,
    });
  }
  return rows;
}

/**
 * Writes the planned labels; each write reads the interface again and writes only when its
 * label still differs (setInterfaceLabel). Returns how many were written.
 */
export async function applyIbGuids(netbox: NetboxClient, rows: readonly IbGuidRow[]): Promise<number> {
  let written = 0;
  for (const r of rows)
    if (r.action === "write" && r.interface && (await netbox.setInterfaceLabel(r.interface.id, r.guid)).changed)
      written++;
  return written;
}
