/**
 * A reflector: list a source's complete view, push it to the hub — the informer pattern of
 * Kubernetes controllers, with the hub's reflection endpoint as the store. It runs on the loop
 * engine (./loop.ts); because every push is the source's whole view, a failed push loses nothing:
 * the next successful one carries every change since.
 */
import type { HubClient } from "@fm/clients";
import type { NetboxReflectionSite, ReflectionSource } from "@fm/domain";
import type { CycleContext, HubOutagePolicy, LoopSpec } from "./loop.ts";
import { CycleFailure, hubReason } from "./loop.ts";
import { describeError } from "./log.ts";

export interface ReflectorSpec<T> {
  /** Store name, the `store` label of the metrics, e.g. `ironic-nodes-overcloud`. */
  store: string;
  /** The source's complete current view. */
  list(signal: AbortSignal): Promise<T[]>;
  /**
   * Optional step between list and push (e.g. applying hub cordons to Ironic). It may change
   * the items to reflect what it did. A failure is counted and logged but does not stop the push.
   */
  reconcile?(items: T[], signal: AbortSignal): Promise<T[]>;
  /** Sends the view to the hub; returns what to log (the hub's counts). */
  push(items: T[], observedAt: Date, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Metric reason of a failed list, e.g. `unavailable` vs `http_error`. */
  classifyListError?(err: unknown): string;
  /** What an unavailable hub does to this reflector (./loop.ts); default `restart`. */
  hubOutage?: HubOutagePolicy;
}

/**
 * The usual `push`: the view to the site's reflection of `source`; what to log is the hub's counts
 * (the unmatched items themselves stay out of the log line).
 */
export async function pushView(
  hub: HubClient,
  siteId: string,
  source: ReflectionSource,
  items: unknown[],
  observedAt: Date,
  site?: NetboxReflectionSite,
): Promise<Record<string, unknown>> {
  const { created, updated, unchanged, missing, unmatched } = await hub.pushReflection(siteId, source, {
    observedAt: observedAt.toISOString(),
    items,
    ...(site ? { site } : {}),
  });
  return { created, updated, unchanged, missing, unmatched };
}

/** The reflector as a loop: list → reconcile → push, timed. Listing completely is what it observes. */
export function reflector<T>(spec: ReflectorSpec<T>): LoopSpec {
  return {
    kind: "reflector",
    store: spec.store,
    cycle: (c) => reflectOnce(spec, c),
    ...(spec.hubOutage ? { hubOutage: spec.hubOutage } : {}),
  };
}

async function reflectOnce<T>(
  spec: ReflectorSpec<T>,
  { signal, metrics, log, now, observed }: CycleContext,
): Promise<Record<string, unknown>> {
  const { store } = spec;
  const observedAt = new Date(now());
  const t0 = performance.now();
  let items: T[];
  try {
    items = await spec.list(signal);
  } catch (err) {
    throw new CycleFailure("list", spec.classifyListError?.(err) ?? "list_failed", err);
  }
  const listS = (performance.now() - t0) / 1000;
  observed(observedAt.getTime());
  metrics.listDuration.observe({ store }, listS);
  metrics.items.set({ store }, items.length);
  if (spec.reconcile) {
    try {
      items = await spec.reconcile(items, signal);
    } catch (err) {
      metrics.errors.inc({ store, reason: "reconcile_failed" });
      log.warn({ store, err: describeError(err) }, "reconcile step failed; pushing the listed view anyway");
    }
  }
  const t1 = performance.now();
  let result: Record<string, unknown>;
  try {
    result = await spec.push(items, observedAt, signal);
  } catch (err) {
    throw new CycleFailure("push", hubReason(err), err);
  }
  const pushS = (performance.now() - t1) / 1000;
  metrics.pushDuration.observe({ store }, pushS);
  return { items: items.length, listMs: Math.round(listS * 1000), pushMs: Math.round(pushS * 1000), ...result };
}
