/** Health: an item is a device's verdict, matched by device name. */
import type { HealthItem } from "@fm/domain";
import type { SourceAdapter } from "./adapter.ts";

export const health: SourceAdapter<HealthItem> = {
  observedField: "healthObservedAt",
  columns: [
    { field: "healthStatus", type: "varchar" },
    { field: "healthConditions", type: "jsonb" },
    { field: "healthObservedAt", type: "timestamptz" },
    { field: "healthSince", type: "timestamptz" },
  ],
  key: (h) => h.name,
  match: (h, idx) => idx.byName.get(h.name),
  // healthSince moves only with the status: the impairment windows count from it.
  changes: ({ status, conditions }, d, observedAt) => ({
    healthStatus: status,
    healthConditions: conditions,
    ...(d.healthStatus === status ? {} : { healthSince: observedAt }),
  }),
  observedBefore: (d) => d.healthObservedAt !== null,
};
