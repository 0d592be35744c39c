/**
 * Impairment cordon and release, run by the health reflection inside its transaction, with the
 * push's `observedAt` as the clock (the windows count between the health agent's observations,
 * so a delayed push cannot shorten them). The rules are `planImpairment` (@fm/domain); this
 * writes them through the device service (history, audit, feed) and sets or clears the site's
 * hold. The Ironic maintenance and SLURM drain follow through the agents' cordon mirrors.
 */
import { HEALTHY_CHECK_STATUSES, planImpairment, type CordonSource, type ImpairmentPolicy } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { recordChange } from "../../changes/recorder.ts";
import { deviceRows, type BulkColumn } from "../devices/public.ts";
import type { DeviceService } from "../devices/service.ts";
import { siteFields } from "../sites/public.ts";
import { impairmentRepo } from "./repo.ts";

const CORDON_COLUMNS: readonly BulkColumn[] = [
  { field: "cordoned", type: "boolean" },
  { field: "cordonReason", type: "text" },
  { field: "cordonedBy", type: "varchar" },
  { field: "cordonedAt", type: "timestamptz" },
  { field: "cordonSource", type: "varchar" },
];

export interface ImpairmentOutcome {
  /** Names of the devices cordoned and released. */
  cordoned: string[];
  released: string[];
  held: boolean;
  /** Ids of the devices cordoned or released. */
  changedIds: string[];
}

export async function applyImpairment(
  tx: Db,
  ctx: RequestContext,
  devices: DeviceService,
  siteId: string,
  policy: ImpairmentPolicy,
  now: Date,
): Promise<ImpairmentOutcome> {
  const rows = await impairmentRepo.devices(tx, siteId);
  const plan = planImpairment(
    rows.map((r) => ({
      id: r.id,
      name: r.name,
      healthStatus: r.healthStatus,
      healthSince: r.healthSince,
      failing: ((r.healthConditions ?? []) as { name: string; status: string }[])
        .filter((c) => !HEALTHY_CHECK_STATUSES.includes(c.status.toLowerCase()))
        .map((c) => c.name),
      cordoned: r.cordoned,
      cordonSource: r.cordonSource as CordonSource | null,
    })),
    policy,
    now,
  );
  const changing = [...plan.cordon.map((c) => c.id), ...plan.release.map((r) => r.id)];
  let cordoned: string[] = [];
  let released: string[] = [];
  let changedIds: string[] = [];
  if (changing.length) {
    // The plan was made from rows read without a lock: lock the devices it changes and keep only
    // what still holds, so an operator's cordon committed meanwhile is neither undone nor replaced.
    const locked = new Map((await deviceRows.lockByIds(tx, changing)).map((r) => [r.id, r]));
    const cordon = plan.cordon.filter((c) => locked.get(c.id)?.cordoned === false);
    const release = plan.release.filter((r) => {
      const row = locked.get(r.id);
      return row?.cordoned === true && row.cordonSource === "impairment";
    });
    await devices.applyMany(
      tx,
      ctx,
      [
        ...cordon.map((c) => ({
          current: locked.get(c.id)!,
          changes: {
            cordoned: true,
            cordonReason: c.reason,
            cordonedBy: ctx.principal.id,
            cordonedAt: now,
            cordonSource: "impairment",
          },
        })),
        ...release.map((r) => ({
          current: locked.get(r.id)!,
          changes: { cordoned: false, cordonReason: null, cordonedBy: null, cordonedAt: null, cordonSource: null },
        })),
      ],
      "impairment",
      CORDON_COLUMNS,
    );
    cordoned = cordon.map((c) => c.name);
    released = release.map((r) => r.name);
    changedIds = [...cordon.map((c) => c.id), ...release.map((r) => r.id)];
  }
  const site = await impairmentRepo.site(tx, siteId);
  const wasHeld = site.impairmentHeldSince !== null;
  if (plan.held ? !wasHeld || site.impairmentHoldMessage !== plan.held.message : wasHeld) {
    const updated = await impairmentRepo.setHold(
      tx,
      siteId,
      plan.held && { since: site.impairmentHeldSince ?? now, message: plan.held.message },
    );
    await recordChange(tx, ctx, {
      resourceType: "site",
      resourceId: siteId,
      siteId,
      verb: "updated",
      before: siteFields(site),
      after: siteFields(updated),
    });
  }
  const outcome = {
    cordoned,
    released,
    held: plan.held !== null,
  };
  if (outcome.cordoned.length || outcome.released.length || plan.held)
    ctx.log[plan.held ? "warn" : "info"](
      { siteId, ...outcome, hold: plan.held?.message },
      plan.held ? "impairment cordons held by the site limit" : "impairment cordons applied",
    );
  return { ...outcome, changedIds };
}
