/**
 * A controller: observe what needs attention (what is desired against what is, e.g. the site's
 * active jobs against their workflows) and act on each item, a few at once. It runs on the loop
 * engine (./loop.ts), with the same interval, backoff, failure budget and store metrics as a
 * reflector.
 *
 * One item failing is that item's problem: it is logged, counted
 * (`fleet_manager_controller_actions_total{action="failed"}`) and tried again next cycle, and the
 * others go on. A cycle fails only when it could not observe, or when every item failed for want
 * of an answer (an outage of whatever the controller acts on): then backoff and the exit budget
 * apply, as for any loop.
 */
import type { CycleContext, LoopSpec } from "./loop.ts";
import { CycleFailure, type HubOutagePolicy } from "./loop.ts";
import { describeError } from "./log.ts";

export interface ControllerSpec<T, A extends string> {
  /** Store name, the `store` label of the metrics, e.g. `workflow`. */
  store: string;
  /** What an action can come to, counted by `action` (`failed` is counted besides). */
  actions: readonly A[];
  /** How many items are acted on at once. */
  concurrency: number;
  /** The items that need attention now. */
  observe(signal: AbortSignal): Promise<T[]>;
  /** Moves one item towards its desired state; resolves with what it did. */
  act(item: T, signal: AbortSignal): Promise<A>;
  /** Log fields that name an item. */
  describeItem(item: T): Record<string, unknown>;
  /** Is this failure the item's own (e.g. a refusal of that item), not an outage? Default: no. */
  isItemFailure?(err: unknown): boolean;
  /** Metric reason of a failed observation. */
  classifyObserveError?(err: unknown): string;
  /** Metric reason of a cycle whose every action failed. */
  classifyActError?(err: unknown): string;
  /** What an unavailable hub does to this controller (./loop.ts); default `restart`. */
  readonly hubOutage?: HubOutagePolicy;
}

/** The controller as a loop: observe → act on each item, timed and counted. */
export function controller<T, A extends string>(spec: ControllerSpec<T, A>): LoopSpec {
  return {
    kind: "controller",
    store: spec.store,
    cycle: (c) => controlOnce(spec, c),
    ...(spec.hubOutage ? { hubOutage: spec.hubOutage } : {}),
  };
}

async function controlOnce<T, A extends string>(
  spec: ControllerSpec<T, A>,
  { signal, metrics, log, now, observed }: CycleContext,
): Promise<Record<string, unknown>> {
  const { store } = spec;
  const t0 = performance.now();
  const observedAt = now();
  let items: T[];
  try {
    items = await spec.observe(signal);
  } catch (err) {
    throw new CycleFailure("observe", spec.classifyObserveError?.(err) ?? "observe_failed", err);
  }
  const observeS = (performance.now() - t0) / 1000;
  observed(observedAt);
  metrics.listDuration.observe({ store }, observeS);
  metrics.items.set({ store }, items.length);

  const t1 = performance.now();
  const counts = Object.fromEntries([...spec.actions, "failed"].map((a) => [a, 0])) as Record<A | "failed", number>;
  const outages: unknown[] = [];
  await pool(items, spec.concurrency, async (item) => {
    let action: A | "failed";
    try {
      action = await spec.act(item, signal);
    } catch (err) {
      action = "failed";
      if (!spec.isItemFailure?.(err)) outages.push(err);
      log.error(
        { store, ...spec.describeItem(item), err: describeError(err) },
        "controller action failed; retrying next cycle",
      );
    }
    counts[action]++;
    metrics.actions.inc({ store, action });
  });
  const actS = (performance.now() - t1) / 1000;
  metrics.actDuration.observe({ store }, actS);
  if (outages.length && outages.length === items.length)
    throw new CycleFailure("act", spec.classifyActError?.(outages[0]) ?? "act_failed", outages[0]);
  return { observed: items.length, observeMs: Math.round(observeS * 1000), actMs: Math.round(actS * 1000), ...counts };
}

/** Runs `fn` over `items`, at most `size` at once. */
export async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
