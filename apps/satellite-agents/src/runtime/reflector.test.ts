import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubApiError } from "@fm/clients";
import { createAgentMetrics } from "./metrics.ts";
import { Reflector, ReflectorGaveUp } from "./reflector.ts";

const log = pino({ level: "silent" });
const opts = { intervalMs: 5, backoffBaseMs: 1, backoffMaxMs: 4, maxConsecutiveFailures: 3 };

async function metricValue(
  metrics: ReturnType<typeof createAgentMetrics>,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value;
}

describe("Reflector", () => {
  it("pushes what it lists with the time listing started, and records success", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const pushed: { items: number[]; observedAt: Date }[] = [];
    const before = Date.now();
    const r = new Reflector(
      {
        store: "st",
        list: async () => [1, 2, 3],
        push: async (items, observedAt) => (pushed.push({ items, observedAt }), { updated: 3 }),
      },
      opts,
      metrics,
      log,
    );
    expect(await r.cycle(new AbortController().signal)).toEqual({ updated: 3 });
    expect(pushed[0]!.items).toEqual([1, 2, 3]);
    expect(pushed[0]!.observedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_last_success_timestamp_seconds", { store: "st" }),
    ).toBeGreaterThanOrEqual(before / 1000);
    expect(await metricValue(metrics, "fleet_manager_reflector_items", { store: "st" })).toBe(3);
  });

  it("counts failures by reason, resets on success, and gives up after N in a row", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const outcomes = ["list", "ok", "push", "push503", "list"];
    let n = 0;
    const r = new Reflector(
      {
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
      },
      opts,
      metrics,
      log,
    );
    const err = await r.run(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReflectorGaveUp);
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
    expect(r.cycles).toBe(1);
  });

  it("stops cleanly when asked, and a failing reconcile step does not stop the push", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const stop = new AbortController();
    let pushes = 0;
    const r = new Reflector(
      {
        store: "st",
        list: async () => [1],
        reconcile: async () => {
          throw new Error("hub read failed");
        },
        push: async () => {
          if (++pushes === 3) stop.abort();
          return {};
        },
      },
      opts,
      metrics,
      log,
    );
    await r.run(stop.signal);
    expect(pushes).toBe(3);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "st", reason: "reconcile_failed" }),
    ).toBe(3);
  });
});
