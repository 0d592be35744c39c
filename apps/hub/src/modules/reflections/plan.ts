/**
 * What an Ironic, SLURM or health push does to a site's devices, decided without the database:
 * which item matches which device, which devices change and how, which the source no longer
 * lists, and whose discrepancies the push may change. annotations.ts reads what this needs and
 * writes what it decides.
 */
import { differs } from "../devices/public.ts";
import type { AnnotatedDevice } from "./repo.ts";
import type { Changes, DeviceIndex, SourceAdapter } from "./sources/index.ts";

export interface AnnotationPlan {
  /** Devices whose fields the push changes, with the new fields, in push order. */
  changing: { id: string; changes: Changes }[];
  /** Devices the source listed before and no longer lists: their fields are to be cleared. */
  vanished: AnnotatedDevice[];
  /** Keys of the items that match no device, in push order (an item whose device an earlier item took, too). */
  unmatched: string[];
  /** The devices the push lists, in push order: each is observed now. */
  seen: string[];
  /** Devices listed with nothing changed. */
  unchanged: number;
  /**
   * Devices whose discrepancies this push may change besides those it writes: observed by the
   * source for the first time, or (a source that judges unreported devices) not reported by it.
   */
  touched: Set<string>;
}

/**
 * The plan of one push. `heldElsewhere`: the node UUIDs (lower case) of this push that another
 * site's devices hold; such an item is unmatched until that site's agent lets the node go.
 */
export function planAnnotations<Item>(
  index: DeviceIndex,
  items: readonly Item[],
  adapter: SourceAdapter<Item>,
  observedAt: Date,
  heldElsewhere: ReadonlySet<string> = new Set(),
): AnnotationPlan {
  const plan: AnnotationPlan = {
    changing: [],
    vanished: [],
    unmatched: [],
    seen: [],
    unchanged: 0,
    touched: new Set(),
  };
  const seen = new Set<string>();
  for (const item of items) {
    const device = heldElsewhere.has(adapter.nodeUuid?.(item).toLowerCase() ?? "")
      ? undefined
      : adapter.match(item, index);
    if (!device || seen.has(device.id)) {
      plan.unmatched.push(adapter.key(item));
      continue;
    }
    seen.add(device.id);
    if (device[adapter.observedField] === null) plan.touched.add(device.id);
    // The changes never carry the observed-at: observing alone is not a change to record.
    const changes = adapter.changes(item, device, observedAt);
    if (differs(device, changes)) plan.changing.push({ id: device.id, changes });
    else plan.unchanged++;
  }
  plan.seen = [...seen];
  plan.vanished = index.all.filter((d) => !seen.has(d.id) && adapter.observedBefore(d));
  // In the steady state, only the devices the source does not know (few): a device created by
  // any path, even one that wrote no discrepancy of its own, is judged by the next push.
  if (adapter.judgesUnreported)
    for (const d of index.all) if (!seen.has(d.id) && d[adapter.observedField] === null) plan.touched.add(d.id);
  return plan;
}
