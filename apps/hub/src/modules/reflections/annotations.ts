/**
 * Ironic, SLURM and health reflections annotate devices NetBox created: items are matched to
 * devices (sources/: one file per source), and only what changed is written, in bulk, through the
 * device service (history, audit, feed). Devices the source observed before and no longer lists
 * have that source's fields cleared (`missing`). plan.ts decides; this file reads and writes.
 */
import type { ReflectionResult } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { deviceRows, type DeviceService } from "../devices/public.ts";
import { planAnnotations } from "./plan.ts";
import { reflectionRepo } from "./repo.ts";
import { DeviceIndex, clearedOf, type Annotating } from "./sources/index.ts";

export interface Annotated {
  result: ReflectionResult;
  /** The key of every item that matches no device (the result names only the first 100). */
  unmatchedKeys: string[];
  /**
   * The id of every device whose fields this push may have changed: written, cleared, or
   * observed by this source for the first time (what its discrepancies depend on).
   */
  touched: Set<string>;
}

/** Ironic, SLURM and health: annotate devices that exist; clear what a source stopped listing. */
export async function applyAnnotations<Item>(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  { source, adapter, items }: Annotating<Item>,
  siteId: string,
  observedAt: Date,
): Promise<Annotated> {
  // Only the columns matching and comparing need: most devices of most pushes are unchanged,
  // and their full rows (conditions, tags, notes …) are never looked at.
  const index = new DeviceIndex(
    await reflectionRepo.annotatedDevices(
      tx,
      siteId,
      adapter.columns.map((c) => c.field),
    ),
  );
  // A node another site's device holds (moved between sites, or a careless agent) cannot be
  // recorded here as well. A node UUID is unique in the fleet, so only those no device of this
  // site holds are asked about (in the steady state, none).
  const heldElsewhere = adapter.nodeUuid
    ? await reflectionRepo.nodeUuidsHeldElsewhere(
        tx,
        siteId,
        items.map(adapter.nodeUuid).filter((uuid) => !index.byNode.has(uuid.toLowerCase())),
      )
    : new Set<string>();
  const plan = planAnnotations(index, items, adapter, observedAt, heldElsewhere);
  const { touched } = plan;
  // Full rows for the devices that change, locked: their status is derived from every field,
  // and their representation after the change is built from them.
  const full = new Map(
    (await deviceRows.lockByIds(tx, [...plan.changing.map((e) => e.id), ...plan.vanished.map((d) => d.id)])).map(
      (r) => [r.id, r],
    ),
  );
  // A device a job observed after this push's moment keeps what the job recorded (see
  // deviceRows.lockObservedAfter): an ENROL's new Ironic node is not cleared by a list read before it.
  const newer = (id: string) => (full.get(id)![adapter.observedField] ?? 0) > observedAt;
  const missing = plan.vanished.filter((d) => !newer(d.id));
  const changing = plan.changing.filter((e) => !newer(e.id));
  for (const d of [...missing, ...changing]) touched.add(d.id);
  // Missing first: a node UUID a vanished device held may now belong to another device.
  const cleared = clearedOf(adapter.columns);
  await devices.applyMany(
    tx,
    ctx,
    missing.map((d) => ({ current: full.get(d.id)!, changes: cleared })),
    source,
    adapter.columns,
  );
  const updated = await devices.applyMany(
    tx,
    ctx,
    changing.map((e) => ({ current: { ...full.get(e.id)!, [adapter.observedField]: observedAt }, changes: e.changes })),
    source,
    adapter.columns,
  );
  await deviceRows.markObserved(tx, adapter.observedField, plan.seen, observedAt);
  return {
    result: {
      created: 0,
      updated,
      // Listed but not written: nothing differed, a job observed it later, or applying changed nothing.
      unchanged: plan.unchanged + plan.changing.length - updated,
      missing: missing.length,
      unmatched: plan.unmatched.length,
      unmatchedItems: plan.unmatched.slice(0, 100),
    },
    unmatchedKeys: plan.unmatched,
    touched,
  };
}
