/**
 * Ironic ports from the device's NetBox interfaces: one port per interface with a MAC address
 * (the BMC's management-only interface excluded: Ironic reaches the BMC through driver_info, not
 * through a port), with the switch port its cable reaches as the `local_link_connection` and the
 * provisioning NIC as the one `pxe_enabled` port. Looks before it acts: ports the node already
 * has are compared and only what differs is patched; a MAC another node's port holds is refused.
 */
import {
  IronicApiError,
  macOf,
  peerOf,
  type IronicLocalLink,
  type IronicPort,
  type NetboxInterface,
} from "@fm/clients";
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, netboxIdOf, netboxOf, nodeRef, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";

type PortDeps = Pick<ActivityDeps, "ironic" | "netbox">;

/** A port as the node must have it. */
export interface WantedPort {
  /** Lower case, as Ironic stores it. */
  address: string;
  pxeEnabled: boolean;
  localLink: IronicLocalLink | null;
  /** The NetBox interface it comes from, kept in the port's `extra` for operators. */
  interfaceName: string;
}

/** What the step did to the node's ports. */
export interface PortsOutcome {
  created: number;
  updated: number;
  unchanged: number;
}

export function portActivities(deps: PortDeps) {
  return { ironicPorts: (d: DevicePlan) => ironicPorts(deps, d) };
}

/**
 * The ports a device's interfaces call for. `provisioning` is the NetBox id of the interface
 * holding the device's primary IPv4 (null without one: the first cabled interface then boots).
 * `switchMacs` holds, by NetBox device id, the MAC of each cable peer's management interface,
 * which is the switch_id networking-generic-switch and Neutron's ML2 drivers match a switch by.
 */
export function wantedPorts(
  device: string,
  interfaces: NetboxInterface[],
  provisioning: number | null,
  switchMacs: ReadonlyMap<number, string | null>,
): WantedPort[] {
  const candidates = interfaces.filter((i) => !i.mgmt_only && macOf(i));
  const pxe = candidates.find((i) => i.id === provisioning) ?? candidates.find((i) => peerOf(i)) ?? null;
  return candidates.map((i) => {
    const peer = peerOf(i);
    let localLink: IronicLocalLink | null = null;
    if (peer) {
      const switchId = switchMacs.get(peer.deviceId);
      if (!switchId)
        throw badInput(
          `${peer.device}, which ${device} ${i.name} is cabled to, has no MAC address on a management-only interface in NetBox: Ironic needs it as the port's switch_id`,
        );
      localLink = { switch_id: switchId.toLowerCase(), port_id: peer.name, switch_info: peer.device };
    }
    return { address: macOf(i)!.toLowerCase(), pxeEnabled: i === pxe, localLink, interfaceName: i.name };
  });
}

/** The JSON patch that brings a port to what is wanted, empty when it is there already. */
export function portPatch(port: IronicPort, want: WantedPort) {
  const ops: Array<{ op: "add"; path: string; value: unknown }> = [];
  if (port.pxe_enabled !== want.pxeEnabled) ops.push({ op: "add", path: "/pxe_enabled", value: want.pxeEnabled });
  const link = port.local_link_connection;
  const sameLink = want.localLink
    ? link.switch_id === want.localLink.switch_id &&
      link.port_id === want.localLink.port_id &&
      link.switch_info === want.localLink.switch_info
    : Object.keys(link).length === 0;
  if (!sameLink) ops.push({ op: "add", path: "/local_link_connection", value: want.localLink ?? {} });
  if (port.extra.netbox_interface !== want.interfaceName)
    ops.push({ op: "add", path: "/extra/netbox_interface", value: want.interfaceName });
  return ops;
}

async function ironicPorts(deps: PortDeps, d: DevicePlan): Promise<PortsOutcome> {
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const netbox = netboxOf(deps);
    const id = netboxIdOf(d);
    const node = await client.getNode(nodeRef(d));
    const [device, interfaces] = await Promise.all([netbox.device(id), netbox.interfaces({ device_id: id })]);
    let provisioning: number | null = null;
    if (device.primary_ip4) {
      const [ip] = await netbox.ipAddresses({ id: device.primary_ip4.id });
      provisioning = ip?.assigned_object_type === "dcim.interface" ? (ip.assigned_object_id ?? null) : null;
    }
    const switchMacs = new Map<number, string | null>();
    for (const peer of interfaces.map(peerOf))
      if (peer && !switchMacs.has(peer.deviceId)) {
        const mgmt = await netbox.interfaces({ device_id: peer.deviceId, mgmt_only: true });
        switchMacs.set(peer.deviceId, mgmt.map(macOf).find(Boolean) ?? null);
      }
    const wanted = wantedPorts(d.name, interfaces, provisioning, switchMacs);

    // Every MAC is placed before anything is written: a MAC another node holds fails the step
    // with the node's ports as they were.
    const existing = new Map((await client.listPorts({ node: node.uuid })).map((p) => [p.address.toLowerCase(), p]));
    const placed: Array<{ want: WantedPort; port: IronicPort | undefined }> = [];
    for (const want of wanted)
      placed.push({ want, port: existing.get(want.address) ?? (await portElsewhere(deps, d, node.uuid, want)) });

    const outcome: PortsOutcome = { created: 0, updated: 0, unchanged: 0 };
    for (const { want, port: found } of placed) {
      let port = found;
      if (!port) {
        try {
          await client.createPort({
            address: want.address,
            node_uuid: node.uuid,
            pxe_enabled: want.pxeEnabled,
            ...(want.localLink ? { local_link_connection: want.localLink } : {}),
            extra: { netbox_interface: want.interfaceName },
          });
          outcome.created++;
          continue;
        } catch (err) {
          // Another attempt of this activity, or another node, took the MAC since we looked.
          if (!(err instanceof IronicApiError && err.status === 409)) throw err;
          port = await portElsewhere(deps, d, node.uuid, want);
          if (!port) throw err;
        }
      }
      const patch = portPatch(port, want);
      if (patch.length) {
        await client.patchPort(port.uuid, patch);
        outcome.updated++;
      } else outcome.unchanged++;
    }
    return outcome;
  });
}

/**
 * The port holding the wanted MAC when it is this node's (a race), or a refusal naming the node
 * that holds it; undefined when no port has it.
 */
async function portElsewhere(
  deps: PortDeps,
  d: DevicePlan,
  nodeUuid: string,
  want: WantedPort,
): Promise<IronicPort | undefined> {
  const client = ironicFor(deps, d);
  const [holder] = await client.listPorts({ address: want.address });
  if (!holder) return undefined;
  if (holder.node_uuid === nodeUuid) return holder;
  const other = await client.findNode(holder.node_uuid);
  throw badInput(
    `the MAC address ${want.address} of ${d.name} ${want.interfaceName} is already a port of Ironic node ${other?.name ?? holder.node_uuid}: fix NetBox or that node's port`,
  );
}
