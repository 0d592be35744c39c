/**
 * Cable paths through patch panels, as NetBox's CablePath traces them (SOURCES.md S17): from an
 * interface over its cable; a front port continues at its rear port, whose cable leads to the
 * far panel's rear port, which continues at the front port of the same position; the path ends
 * at an interface (complete) or at a port without a cable (incomplete). `link_peers` are the far
 * terminations of the interface's own cable; `connected_endpoints` the interfaces at the end of a
 * complete path.
 *
 * Not NetBox: front and rear ports have no endpoints of their own here (/api/dcim/front-ports/);
 * they appear only in cables, link peers and paths, in their brief form.
 */
import type {
  CableRecord,
  FrontPortRecord,
  InterfaceRecord,
  NetboxData,
  RearPortRecord,
  TerminationType,
} from "./store.ts";
import { briefInterface } from "./nested.ts";
import type { Json, View } from "./view.ts";

export type Termination = { type: TerminationType; id: number };

/** The far ends of the cable at `from`, with that cable. */
export function farEnds(
  v: View,
  from: Termination,
): { cable: CableRecord; end: "A" | "B"; far: Termination[] } | undefined {
  const link = v.cableAt().get(`${from.type}:${from.id}`);
  if (!link) return undefined;
  const c = link.cable;
  const [ids, type] = link.end === "A" ? [c.b, c.b_type] : [c.a, c.a_type];
  return { ...link, far: ids.map((id) => ({ type: type ?? "dcim.interface", id })) };
}

/** The interfaces a complete path from `iface` ends at, and whether every cable on it is connected; undefined when incomplete. */
export function traceFrom(
  v: View,
  iface: InterfaceRecord,
): { endpoints: InterfaceRecord[]; active: boolean } | undefined {
  let at: Termination = { type: "dcim.interface", id: iface.id };
  let active = true;
  for (let hop = 0; hop < 16; hop++) {
    const link = farEnds(v, at);
    if (!link || !link.far.length) return undefined;
    active &&= link.cable.status === "connected";
    const far = link.far[0]!;
    if (far.type === "dcim.interface") {
      const endpoints = link.far.map((t) => v.data.interfaces.find((i) => i.id === t.id)).filter((i) => !!i);
      return { endpoints, active };
    }
    const next = through(v, far);
    if (!next) return undefined;
    at = next;
  }
  return undefined;
}

/** Across a patch panel: a front port to its rear port, a rear port (by position 1) to its front port. */
function through(v: View, t: Termination): Termination | undefined {
  if (t.type === "dcim.frontport") {
    const fp = v.data.frontPorts.find((p) => p.id === t.id);
    return fp ? { type: "dcim.rearport", id: fp.rear_port } : undefined;
  }
  const fp = v.data.frontPorts.find((p) => p.rear_port === t.id && p.rear_port_position === 1);
  return fp ? { type: "dcim.frontport", id: fp.id } : undefined;
}

/** A termination in its brief form, null when it is gone. */
export function termination(v: View, t: Termination): Json | null {
  if (t.type === "dcim.interface") {
    const i = v.iface(t.id);
    return i ? briefInterface(v, i) : null;
  }
  const rows: Array<FrontPortRecord | RearPortRecord> =
    t.type === "dcim.frontport" ? v.data.frontPorts : v.data.rearPorts;
  const p = rows.find((r) => r.id === t.id);
  return p ? briefPort(v, t.type, p) : null;
}

/** The device a termination belongs to. */
export function deviceOf(v: View, t: Termination): number | undefined {
  if (t.type === "dcim.interface") return v.iface(t.id)?.device;
  const rows: Array<FrontPortRecord | RearPortRecord> =
    t.type === "dcim.frontport" ? v.data.frontPorts : v.data.rearPorts;
  return rows.find((r) => r.id === t.id)?.device;
}

/** The brief form of a termination (front and rear ports: the same brief fields as an interface at v4.5.0). */
export function briefPort(
  v: View,
  type: "dcim.frontport" | "dcim.rearport",
  p: FrontPortRecord | RearPortRecord,
): Json {
  const d = v.device(p.device);
  const cable = v.cableAt().get(`${type}:${p.id}`)?.cable;
  const plural = type === "dcim.frontport" ? "front-ports" : "rear-ports";
  return {
    id: p.id,
    url: v.api(`dcim/${plural}/${p.id}/`),
    display: p.name,
    device: d
      ? {
          id: d.id,
          url: v.api(`dcim/devices/${d.id}/`),
          display: d.name ?? `#${d.id}`,
          name: d.name,
          description: d.description,
        }
      : null,
    name: p.name,
    description: p.description,
    cable: cable
      ? {
          id: cable.id,
          url: v.api(`dcim/cables/${cable.id}/`),
          display: cable.label || `#${cable.id}`,
          label: cable.label,
          description: cable.description,
        }
      : null,
    _occupied: Boolean(cable),
  };
}

/**
 * Test fixture helper: routes the cable on interface `ifaceId` through two patch panels (new
 * devices `<prefix>-a` and `<prefix>-b` at the interface's site, role `patch-panel`): interface ->
 * front port 1 of panel A, rear port of A -> rear port of B, front port 1 of B -> the interface
 * the cable used to reach. Returns the new panel devices' ids.
 */
export function cableThroughPatchPanels(data: NetboxData, ifaceId: number, prefix: string): number[] {
  const cable = data.cables.find((c) => (c.a.includes(ifaceId) && !c.a_type) || (c.b.includes(ifaceId) && !c.b_type));
  if (!cable) throw new Error(`interface ${ifaceId} has no interface-to-interface cable`);
  const atA = cable.a.includes(ifaceId);
  const far = (atA ? cable.b : cable.a)[0]!;
  const iface = data.interfaces.find((i) => i.id === ifaceId)!;
  const dev = data.devices.find((d) => d.id === iface.device)!;
  let role = data.deviceRoles.find((r) => r.slug === "patch-panel");
  if (!role) {
    role = {
      id: Math.max(0, ...data.deviceRoles.map((r) => r.id)) + 1,
      name: "Patch panel",
      slug: "patch-panel",
      color: "9e9e9e",
      vm_role: false,
      description: "",
      tags: [],
      custom_fields: {},
      created: cable.created,
      last_updated: cable.last_updated,
    };
    data.deviceRoles.push(role);
  }
  const stamp = { created: cable.created, last_updated: cable.last_updated };
  const panels = ["a", "b"].map((side) => {
    const id = Math.max(0, ...data.devices.map((d) => d.id)) + 1;
    data.devices.push({
      ...dev,
      id,
      name: `${prefix}-${side}`,
      role: role.id,
      serial: "",
      asset_tag: null,
      position: null,
      face: null,
      primary_ip4: null,
      oob_ip: null,
      cluster: null,
      tags: [],
      custom_fields: {},
      local_context_data: null,
    });
    const rear: RearPortRecord = {
      id: Math.max(0, ...data.rearPorts.map((p) => p.id)) + 1,
      device: id,
      name: "R1",
      positions: 1,
      description: "",
      ...stamp,
    };
    data.rearPorts.push(rear);
    const front: FrontPortRecord = {
      id: Math.max(0, ...data.frontPorts.map((p) => p.id)) + 1,
      device: id,
      name: "F1",
      rear_port: rear.id,
      rear_port_position: 1,
      description: "",
      ...stamp,
    };
    data.frontPorts.push(front);
    return { id, rear, front };
  });
  const [pa, pb] = panels as [(typeof panels)[0], (typeof panels)[0]];
  const nextId = () => Math.max(0, ...data.cables.map((c) => c.id)) + 1;
  Object.assign(cable, { a: [ifaceId], a_type: undefined, b: [pa.front.id], b_type: "dcim.frontport" });
  data.cables.push({
    ...cable,
    id: nextId(),
    a: [pa.rear.id],
    a_type: "dcim.rearport",
    b: [pb.rear.id],
    b_type: "dcim.rearport",
    type: "smf",
  });
  data.cables.push({ ...cable, id: nextId(), a: [pb.front.id], a_type: "dcim.frontport", b: [far], b_type: undefined });
  return [pa.id, pb.id];
}
