/**
 * Impairment cordon and release: a device whose health has been `critical` for `cordonAfterMs`
 * is cordoned with source `impairment` and a reason naming its failing conditions; one so
 * cordoned is released once its health has been `ok` for `releaseAfterMs`. An operator's cordon
 * is never touched (not released, not taken over). A monitoring outage can make every device look
 * critical: when the site's impairment cordons would exceed `maxSiteFraction` of its devices, no
 * new one is made and the site is held instead (a condition an operator sees), until the count
 * falls back under the limit. Pure: the hub's impairment service does the writes.
 */
import { z } from "zod";

export const CORDON_SOURCES = ["operator", "impairment"] as const;
export const CordonSource = z.enum(CORDON_SOURCES);
export type CordonSource = z.infer<typeof CordonSource>;

/**
 * How a cordon reads in Ironic and SLURM: the OpenStack agent's maintenance reason and the SLURM
 * agent's drain reason are this and the cordon's reason. The prefix marks the maintenance or
 * drain as the hub's own (only such is ever cleared; the discrepancy report calls any other drain
 * someone else's), and it lives in Ironic and SLURM, so that holds across agent restarts.
 */
export const CORDON_REASON_PREFIX = "fleet-manager cordon: ";

export interface ImpairmentPolicy {
  cordonAfterMs: number;
  releaseAfterMs: number;
  /** Largest share of the site's devices impairment may hold cordoned, 0-1. */
  maxSiteFraction: number;
}

/** Critical 10 minutes cordons, ok 30 minutes releases, at most a tenth of a site at once. */
export const DEFAULT_IMPAIRMENT_POLICY: ImpairmentPolicy = {
  cordonAfterMs: 600_000,
  releaseAfterMs: 1_800_000,
  maxSiteFraction: 0.1,
};

export interface ImpairmentDevice {
  id: string;
  name: string;
  healthStatus: string | null;
  /** Since when the health status has been what it is. */
  healthSince: Date | null;
  /** Names of the failing health conditions. */
  failing: string[];
  cordoned: boolean;
  cordonSource: CordonSource | null;
}

export interface ImpairmentPlan {
  cordon: { id: string; name: string; reason: string }[];
  release: { id: string; name: string }[];
  /** Set when cordons were due but the site limit stopped them. */
  held: null | { due: number; limit: number; message: string };
}

const lasted = (d: ImpairmentDevice, status: string, ms: number, now: Date) =>
  d.healthStatus === status && d.healthSince !== null && now.getTime() - d.healthSince.getTime() >= ms;

export function impairmentReason(d: ImpairmentDevice): string {
  const what = d.failing.length ? d.failing.join(", ") : "health";
  return `impairment: ${what} critical since ${d.healthSince!.toISOString()}`;
}

export function planImpairment(
  devices: readonly ImpairmentDevice[],
  policy: ImpairmentPolicy,
  now: Date,
): ImpairmentPlan {
  const release = devices
    .filter((d) => d.cordoned && d.cordonSource === "impairment" && lasted(d, "ok", policy.releaseAfterMs, now))
    .map((d) => ({ id: d.id, name: d.name }));
  const due = devices.filter((d) => !d.cordoned && lasted(d, "critical", policy.cordonAfterMs, now));
  const held = devices.filter((d) => d.cordoned && d.cordonSource === "impairment").length - release.length;
  const limit = Math.floor(devices.length * policy.maxSiteFraction);
  if (due.length && held + due.length > limit)
    return {
      cordon: [],
      release,
      held: {
        due: due.length,
        limit,
        message:
          `${due.length} device(s) critical long enough to cordon, but ${held + due.length} impairment cordons would ` +
          `exceed ${limit} (${policy.maxSiteFraction * 100}% of ${devices.length} devices): none made; ` +
          `is the site's monitoring itself failing?`,
      },
    };
  return { cordon: due.map((d) => ({ id: d.id, name: d.name, reason: impairmentReason(d) })), release, held: null };
}
