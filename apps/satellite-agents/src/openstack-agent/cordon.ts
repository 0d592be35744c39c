/**
 * Operator cordon in the hub → Ironic maintenance, as Kubernetes' cordon marks a node
 * unschedulable: a cordoned device's node is put in maintenance with the cordon's reason, so
 * Nova/the scheduler stop placing work on it; uncordon takes it out again.
 *
 * The agent only ever clears a maintenance it set itself. It recognises its own by the reason
 * prefix `CORDON_REASON_PREFIX` (@fm/domain, the SLURM mirror's too), which lives in Ironic, so
 * the rule holds across agent restarts and replicas with no local state. A maintenance set by an operator, or by Ironic itself after
 * a failed clean, has another reason and is never touched: not replaced while cordoned, not
 * cleared on uncordon.
 */
import { CORDON_REASON_PREFIX, type IronicItem } from "@fm/domain";

export interface CordonedDevice {
  name: string;
  nodeUuid: string | null;
  reason: string | null;
}

export type MaintenanceAction =
  | { uuid: string; name: string | null; action: "set"; reason: string }
  | { uuid: string; name: string | null; action: "clear" };

/** What to change in Ironic so maintenance follows the hub's cordons. Pure. */
export function planMaintenance(
  nodes: readonly IronicItem[],
  cordoned: readonly CordonedDevice[],
): MaintenanceAction[] {
  const byUuid = new Map(cordoned.filter((d) => d.nodeUuid).map((d) => [d.nodeUuid!, d]));
  const byName = new Map(cordoned.map((d) => [d.name, d]));
  const actions: MaintenanceAction[] = [];
  for (const node of nodes) {
    const device = byUuid.get(node.uuid) ?? (node.name ? byName.get(node.name) : undefined);
    const ours = node.maintenance && (node.maintenanceReason ?? "").startsWith(CORDON_REASON_PREFIX);
    if (device) {
      const reason = `${CORDON_REASON_PREFIX}${device.reason ?? "cordoned in Fleet Manager"}`.slice(0, 255);
      // Not in maintenance: set ours. Ours with an outdated reason: refresh it. Someone
      // else's: leave it, the node is out of service either way.
      if (!node.maintenance || (ours && node.maintenanceReason !== reason))
        actions.push({ uuid: node.uuid, name: node.name, action: "set", reason });
    } else if (ours) {
      actions.push({ uuid: node.uuid, name: node.name, action: "clear" });
    }
  }
  return actions;
}
