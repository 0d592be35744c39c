/**
 * SLURM: an item is a node, matched by the node recorded on a device first, then by the device the
 * agent names (deviceNamePrefix; null: none), or else the node's own name.
 */
import type { SlurmItem } from "@fm/domain";
import type { SourceAdapter } from "./adapter.ts";

export const slurm: SourceAdapter<SlurmItem> = {
  observedField: "slurmObservedAt",
  columns: [
    { field: "slurmNodeName", type: "varchar" },
    { field: "slurmState", type: "varchar" },
    { field: "slurmStateFlags", type: "text[]" },
    { field: "slurmReason", type: "text" },
    { field: "slurmPartitions", type: "text[]" },
    { field: "slurmObservedAt", type: "timestamptz" },
  ],
  key: (n) => n.name,
  match: (n, idx) => {
    const byName = n.device === undefined ? n.name : n.device;
    return idx.bySlurm.get(n.name) ?? (byName === null ? undefined : idx.byName.get(byName));
  },
  changes: (n) => ({
    slurmNodeName: n.name,
    slurmState: n.state,
    slurmStateFlags: n.flags,
    slurmReason: n.reason,
    slurmPartitions: n.partitions,
  }),
  observedBefore: (d) => d.slurmObservedAt !== null,
};
