/**
 * Ironic (overcloud or undercloud): an item is a node, matched to a device by node UUID, then by
 * name, then by serial. A device is the instance's once that instance listed it.
 */
import type { IronicItem } from "@fm/domain";
import type { SourceAdapter } from "./adapter.ts";

export function ironic(instance: "overcloud" | "undercloud"): SourceAdapter<IronicItem> {
  return {
    observedField: "ironicObservedAt",
    columns: [
      { field: "ironicInstance", type: "varchar" },
      { field: "ironicNodeUuid", type: "uuid" },
      { field: "ironicProvisionState", type: "varchar" },
      { field: "ironicTargetProvisionState", type: "varchar" },
      { field: "ironicPowerState", type: "varchar" },
      { field: "ironicMaintenance", type: "boolean" },
      { field: "ironicMaintenanceReason", type: "text" },
      { field: "ironicLastError", type: "text" },
      { field: "ironicFault", type: "varchar" },
      { field: "ironicObservedAt", type: "timestamptz" },
    ],
    key: (n) => n.name ?? n.uuid,
    match: (n, idx) =>
      idx.byNode.get(n.uuid) ??
      (n.name ? idx.byName.get(n.name) : undefined) ??
      (n.serial ? idx.bySerial.get(n.serial) : undefined),
    changes: (n) => ({
      ironicInstance: instance,
      ironicNodeUuid: n.uuid,
      ironicProvisionState: n.provisionState,
      ironicTargetProvisionState: n.targetProvisionState,
      ironicPowerState: n.powerState,
      ironicMaintenance: n.maintenance,
      ironicMaintenanceReason: n.maintenanceReason,
      ironicLastError: n.lastError,
      ironicFault: n.fault,
    }),
    observedBefore: (d) => d.ironicInstance === instance && d.ironicObservedAt !== null,
    nodeUuid: (n) => n.uuid,
    judgesUnreported: true,
  };
}
