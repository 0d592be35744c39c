/**
 * Ironic node → the hub's reflection item (domain `IronicItemSchema`). Pure, so the mapping is
 * tested without Ironic and shared by the agent and the benchmarks.
 */
import type { IronicItem } from "@fm/domain";
import type { IronicNode } from "@fm/clients";

/** Ironic has no serial field; sites record it in `extra.serial` or `properties.serial_number`. */
function serialOf(node: IronicNode): string | null {
  const candidates = [node.extra?.["serial"], node.extra?.["serial_number"], node.properties?.["serial_number"]];
  const s = candidates.find((c): c is string => typeof c === "string" && c.length > 0 && c.length <= 100);
  return s ?? null;
}

const clip = (s: string | null | undefined, n: number) => (s == null ? null : s.length > n ? s.slice(0, n) : s);

export function toReflectionItem(node: IronicNode): IronicItem {
  return {
    uuid: node.uuid,
    name: clip(node.name, 200),
    serial: serialOf(node),
    provisionState: clip(node.provision_state, 40),
    targetProvisionState: clip(node.target_provision_state, 40),
    powerState: clip(node.power_state, 40),
    maintenance: Boolean(node.maintenance),
    maintenanceReason: clip(node.maintenance_reason, 10_000),
    lastError: clip(node.last_error, 10_000),
    fault: clip(node.fault, 100),
  };
}
