import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubApiError } from "@fm/clients";
import { Loop, LoopGaveUp } from "./loop.ts";
import { createAgentMetrics } from "./metrics.ts";
import { reflector } from "./reflector.ts";
import { metricValue } from "./testing.ts";

const log = pino({ level: "silent" });
const opts = { intervalMs: 5, backoffBaseMs: 1, backoffMaxMs: 4, maxConsecutiveFailures: 3 };

describe("a reflector on the loop engine", () => {
  it("pushes what it lists with the time listing started, and records success", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const pushed: { items: number[]; observedAt: Date }[] = [];
    const before = Date.now();
    const loop = new Loop(
      reflector({
        store: "st",
        list: async () => [1, 2, 3],
        push: async (items: number[], observedAt: Date) => (pushed.push({ items, observedAt }), { updated: 3 }),
      }),
      opts,
      metrics,
      log,
    );
    expect(loop.kind).toBe("reflector");
    expect(await loop.cycle(new AbortController().signal)).toMatchObject({ items: 3, updated: 3 });
    expect(pushed[0]!.items).toEqual([1, 2, 3]);
    expect(pushed[0]!.observedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_last_success_timestamp_seconds", { store: "st" }),
    ).toBeGreaterThanOrEqual(before / 1000);
    expect(await metricValue(metrics, "fleet_manager_reflector_items", { store: "st" })).toBe(3);
    expect(loop.lastSuccessAt).toBeGreaterThanOrEqual(before);
  });

  it("counts failures by reason, resets on success, and gives up after N in a row", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const outcomes = ["list", "ok", "push", "push503", "list"];
    let n = 0;
    const loop = new Loop(
      reflector({
        store: "st",
        list: async () => {
          if (outcomes[n++ % outcomes.length] === "list") throw new Error("ECONNREFUSED");
          return [];
        },
        classifyListError: () => "source_unavailable",
        push: async () => {
          const o = outcomes[(n - 1) % outcomes.length];
          if (o === "push") throw new HubApiError(400, undefined, "bad");
          if (o === "push503") throw new HubApiError(503, undefined, "down");
          return {};
        },
      }),
      opts,
      metrics,
      log,
    );
    const err = await loop.run(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopGaveUp);
    // list fail, ok (reset), push 400, push 503, list fail → third in a row.
    expect(n).toBe(5);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "st", reason: "source_unavailable" }),
    ).toBe(2);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "st", reason: "hub_rejected" }),
    ).toBe(1);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "st", reason: "hub_unavailable" }),
    ).toBe(1);
    expect(await metricValue(metrics, "fleet_manager_reflector_consecutive_failures", { store: "st" })).toBe(3);
    expect(loop.cycles).toBe(1);
  });

  it("stops cleanly when asked, and a failing reconcile step does not stop the push", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const stop = new AbortController();
    let pushes = 0;
    const loop = new Loop(
      reflector({
        store: "st",
        list: async () => [1],
        reconcile: async () => {
          throw new Error("hub read failed");
        },
        push: async () => {
          if (++pushes === 3) stop.abort();
          return {};
        },
      }),
      opts,
      metrics,
      log,
    );
    await loop.run(stop.signal);
    expect(pushes).toBe(3);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "st", reason: "reconcile_failed" }),
    ).toBe(3);
  });

  it("reports its age from the clock it is given: since start, then since the last success", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    let clock = 1_000_000;
    const loop = new Loop(
      reflector({ store: "st", list: async () => [], push: async () => ({}) }),
      opts,
      metrics,
      log,
      () => clock,
    );
    clock += 42_000;
    expect(loop.ageSeconds()).toBe(42);
    await loop.cycle(new AbortController().signal);
    clock += 1_500;
    expect(loop.ageSeconds()).toBe(1.5);
  });
});
