/**
 * How the store changes: a PATCH through the API, and an edit as an operator makes it in
 * NetBox's UI. Both bump `last_updated` (auto_now: every save does) and log the change NetBox
 * would, so change-log pollers see it.
 *
 * Not NetBox: only the PATCH fields the fleet manager writes are implemented (others answer 400
 * naming the limitation). A PATCH that changes nothing bumps last_updated but records no
 * change; that NetBox skips change records without changes is an assumption (the client never
 * sends such a PATCH).
 */
import { recordChange, serializeObject } from "./core.ts";
import { isPlainObject, type Endpoint } from "./endpoint.ts";
import { componentDisplay, deviceDisplay } from "./nested.ts";
import type { DeviceRecord, InterfaceRecord, MacAddressRecord, NetboxData } from "./store.ts";
import type { View } from "./view.ts";

/** The object types an operator edit may touch. */
export type EditableObjectType = "dcim.device" | "dcim.interface" | "dcim.macaddress";

/**
 * Applies a PATCH body to `row` (an object of `ep`, which has a `patch`): 400 with NetBox's
 * error body when the body is not JSON, not an object or not valid (then nothing is written),
 * else 200 and the object is saved at `time`.
 */
export function applyPatch(
  v: View,
  ep: Endpoint<{ id: number }> & Required<Pick<Endpoint<{ id: number }>, "patch">>,
  row: { id: number },
  bodyText: string,
  change: { time: () => string; requestId: string },
): { status: 200 } | { status: 400; body: unknown } {
  let body: unknown;
  try {
    body = JSON.parse(bodyText || "{}");
  } catch (err) {
    return { status: 400, body: { detail: `JSON parse error - ${(err as Error).message}` } };
  }
  if (!isPlainObject(body))
    return { status: 400, body: { non_field_errors: ["Invalid data. Expected a dictionary, but got list."] } };
  const data = v.data;
  const rec = row as unknown as DeviceRecord | InterfaceRecord;
  const before = serializeObject(data, ep.objectType, rec);
  const snapshot = structuredClone(rec);
  const errors = ep.patch(v, row, body);
  if (errors) {
    Object.assign(rec, snapshot); // validation runs before save in DRF: nothing is written
    return { status: 400, body: errors };
  }
  const time = change.time();
  rec.last_updated = time;
  const after = serializeObject(data, ep.objectType, rec);
  const strip = ({ last_updated: _l, ...rest }: Record<string, unknown>) => rest;
  if (JSON.stringify(strip(before)) !== JSON.stringify(strip(after))) {
    recordChange(data, {
      time,
      request_id: change.requestId,
      action: "update",
      changed_object_type: ep.objectType,
      changed_object_id: rec.id,
      object_repr: "device" in rec ? componentDisplay(rec) : deviceDisplay(data, rec),
      prechange_data: before,
      postchange_data: after,
    });
  }
  return { status: 200 };
}

/**
 * An operator's edit: mutates the stored device, interface or MAC address (or deletes a device
 * with its components) at `time`, and logs the object change.
 */
export function operatorEdit(
  data: NetboxData,
  time: string,
  objectType: EditableObjectType,
  id: number,
  mutate: ((rec: never) => void) | "delete",
): void {
  if (objectType === "dcim.macaddress") {
    const mac = data.macAddresses.find((m) => m.id === id);
    if (!mac) throw new Error(`no MAC address ${id}`);
    const before = { ...mac } as unknown as Record<string, unknown>;
    (mutate as (rec: MacAddressRecord) => void)(mac);
    mac.last_updated = time;
    const after = { ...mac } as unknown as Record<string, unknown>;
    recordChange(data, {
      ...changed(time, objectType, id, mac.mac_address, "update"),
      prechange_data: before,
      postchange_data: after,
    });
    return;
  }
  const rows = (objectType === "dcim.device" ? data.devices : data.interfaces) as (DeviceRecord | InterfaceRecord)[];
  const rec = rows.find((r) => r.id === id);
  if (!rec) throw new Error(`no ${objectType} ${id}`);
  const before = serializeObject(data, objectType, rec);
  const repr = "device" in rec ? componentDisplay(rec) : deviceDisplay(data, rec);
  if (mutate === "delete") {
    if (objectType !== "dcim.device") throw new Error("only devices are deleted here");
    deleteDevice(data, id);
    recordChange(data, {
      ...changed(time, objectType, id, repr, "delete"),
      prechange_data: before,
      postchange_data: null,
    });
    return;
  }
  (mutate as (rec: DeviceRecord | InterfaceRecord) => void)(rec);
  rec.last_updated = time;
  const after = serializeObject(data, objectType, rec);
  recordChange(data, {
    ...changed(time, objectType, id, repr, "update"),
    prechange_data: before,
    postchange_data: after,
  });
}

const changed = (time: string, type: string, id: number, repr: string, action: "update" | "delete") => ({
  time,
  action,
  changed_object_type: type,
  changed_object_id: id,
  object_repr: repr,
});

/** Deletes a device with its interfaces and ports, their MAC addresses and the cables on them. */
function deleteDevice(data: NetboxData, id: number): void {
  const ifaces = new Set(data.interfaces.filter((i) => i.device === id).map((i) => i.id));
  data.devices = data.devices.filter((d) => d.id !== id);
  data.interfaces = data.interfaces.filter((i) => !ifaces.has(i.id));
  data.macAddresses = data.macAddresses.filter((m) => m.interface === null || !ifaces.has(m.interface));
  const ports = new Set([
    ...data.frontPorts.filter((p) => p.device === id).map((p) => `dcim.frontport:${p.id}`),
    ...data.rearPorts.filter((p) => p.device === id).map((p) => `dcim.rearport:${p.id}`),
    ...[...ifaces].map((i) => `dcim.interface:${i}`),
  ]);
  data.frontPorts = data.frontPorts.filter((p) => p.device !== id);
  data.rearPorts = data.rearPorts.filter((p) => p.device !== id);
  const on = (ids: number[], type: string | undefined) =>
    ids.some((x) => ports.has(`${type ?? "dcim.interface"}:${x}`));
  data.cables = data.cables.filter((c) => !on(c.a, c.a_type) && !on(c.b, c.b_type));
}
