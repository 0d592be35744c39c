/**
 * Which NetBox change-log records can change what the netbox agent pushes for its site: pure,
 * so the decision to read NetBox again is tested without a NetBox.
 */
import type { NetboxObjectChange } from "@fm/clients";
import type { NetboxItem } from "@fm/domain";

/** Change-log object types whose edits can change what the agent pushes. */
export const WATCHED = [
  "dcim.device",
  "dcim.interface",
  "dcim.cable",
  "dcim.macaddress",
  "ipam.ipaddress",
  "dcim.rack",
  "dcim.location",
  "dcim.devicetype",
  "dcim.devicerole",
  "extras.tag",
];
/** The agent's last full read of its site. */
export interface NetboxView {
  items: NetboxItem[];
  deviceIds: Set<number>;
  interfaceIds: Set<number>;
}

/** Is this change-log record about something in (or entering) this site's view? */
export function relevant(c: NetboxObjectChange, known: NetboxView, clusterIds: readonly number[]): boolean {
  const data = [c.prechange_data, c.postchange_data].filter((d): d is Record<string, unknown> => d !== null);
  const ref = (v: unknown) =>
    typeof v === "number"
      ? v
      : typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "number"
        ? (v as { id: number }).id
        : undefined;
  switch (c.changed_object_type) {
    case "dcim.device":
      return known.deviceIds.has(c.changed_object_id) || data.some((d) => clusterIds.includes(ref(d.cluster) ?? -1));
    case "dcim.interface":
      return known.interfaceIds.has(c.changed_object_id) || data.some((d) => known.deviceIds.has(ref(d.device) ?? -1));
    case "dcim.macaddress":
    case "ipam.ipaddress":
      return (
        data.some((d) => known.interfaceIds.has(ref(d.assigned_object_id) ?? ref(d.interface) ?? -1)) ||
        data.length === 0
      );
    default:
      // Cables, racks, locations, types, roles, tags: rare, and cheap to over-react to.
      return true;
  }
}
