import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubApiError } from "@fm/clients";
import { Loop, LoopGaveUp, hubReason } from "./loop.ts";
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

/**
 * A reflector whose list and push follow a script of outcomes, one per cycle, then stops; listing
 * takes 10 s and pushing 1 s of its clock. `listedAt`: when each successful listing started.
 */
function scripted(script: string[], hubOutage?: "restart" | "ride-out") {
  const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
  const stop = new AbortController();
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  let clock = 1_000_000;
  let n = 0;
  const listedAt: number[] = [];
  const pushed: { items: number[]; at: number }[] = [];
  const outcome = () => script[n - 1]!;
  const loop = new Loop(
    reflector({
      store: "ironic-nodes-overcloud",
      list: async () => {
        const started = clock;
        clock += 10_000;
        if (++n >= script.length) stop.abort();
        if (outcome() === "ironic-down") throw new Error("ECONNREFUSED");
        listedAt.push(started);
        return [n];
      },
      classifyListError: () => "ironic_unavailable",
      push: async (items: number[]) => {
        clock += 1_000;
        const o = outcome();
        if (o === "hub-503") throw new HubApiError(503, undefined, "down");
        if (o === "hub-unreachable") throw new TypeError("fetch failed");
        if (o === "hub-400") throw new HubApiError(400, undefined, "bad view");
        if (o === "token-401")
          throw Object.assign(new Error("invalid_client"), { status: 401, error: "invalid_client" });
        pushed.push({ items, at: clock });
        return {};
      },
      ...(hubOutage ? { hubOutage } : {}),
    }),
    opts,
    metrics,
    logger,
    () => clock,
  );
  return { loop, metrics, stop, lines, listedAt, pushed, clock: () => clock };
}

describe("what a hub outage does to a loop: its policy", () => {
  it("ride-out: an unavailable hub never spends the failure budget, the age follows listing, and the first push after carries the latest view", async () => {
    // Ten unavailable-hub cycles in a row against a budget of 3.
    const outage = ["hub-503", "hub-unreachable", "hub-503", "hub-503", "hub-unreachable"];
    const s = scripted(["ok", ...outage, ...outage, "ok"], "ride-out");
    await s.loop.run(s.stop.signal);

    expect(s.loop.cycles).toBe(2);
    expect(
      await metricValue(s.metrics, "fleet_manager_reflector_errors_total", {
        store: "ironic-nodes-overcloud",
        reason: "hub_unavailable",
      }),
    ).toBe(10);
    // The push after the outage carries what the cycle that made it listed, the 12th view.
    expect(s.pushed.map((p) => p.items)).toEqual([[1], [12]]);
    expect(s.lines.some((l) => l.msg === "hub available again: reflector pushed its latest view")).toBe(true);
    expect(s.lines.filter((l) => String(l.msg).startsWith("reflector cycle failed: hub unavailable"))).toHaveLength(10);
    expect(
      await metricValue(s.metrics, "fleet_manager_reflector_consecutive_failures", { store: "ironic-nodes-overcloud" }),
    ).toBe(0);
  });

  it("ride-out: during the outage the age is the time since the last listing, not since the hub last accepted", async () => {
    const s = scripted(["ok", "hub-503", "hub-503", "hub-503"], "ride-out");
    await s.loop.run(s.stop.signal);
    // The last cycle listed (at listedAt.at(-1)) and its push failed one second later.
    expect(s.loop.ageSeconds(s.listedAt.at(-1)! + 5_000)).toBe(5);
    expect(s.loop.lastSuccessAt).toBe(s.pushed[0]!.at);
  });

  it("ride-out: Ironic down, or a hub that answers and refuses (400, a rejected client secret), still spends the budget", async () => {
    for (const failure of ["ironic-down", "hub-400", "token-401"]) {
      const s = scripted(["ok", "hub-503", failure, "hub-503", failure, failure], "ride-out");
      const err = await s.loop.run(s.stop.signal).catch((e: unknown) => e);
      expect(err, failure).toBeInstanceOf(LoopGaveUp);
      expect(s.lines.at(-1)!.msg, failure).toBe("reflector cycle failed (3/3)");
      expect(s.lines.at(-1)!.consecutiveFailures, failure).toBe(5);
    }
  });

  it("restart (the default): an unavailable hub spends the budget and the age is the time since the hub last accepted", async () => {
    const s = scripted(["ok", "hub-503", "hub-unreachable", "hub-503", "ok"]);
    const err = await s.loop.run(s.stop.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopGaveUp);
    expect(s.lines.at(-1)!.msg).toBe("reflector cycle failed (3/3)");
    expect(s.loop.ageSeconds(s.clock())).toBe((s.clock() - s.pushed[0]!.at) / 1000);
    expect(s.loop.ageSeconds(s.clock())).toBeGreaterThan((s.clock() - s.listedAt.at(-1)!) / 1000);
  });
});

describe("hubReason: a failed hub call's reason, from the clients' status table", () => {
  it.each([
    [401, "hub_unauthorized"],
    [403, "hub_unauthorized"],
    [409, "hub_conflict"],
    [429, "hub_unavailable"],
    [500, "hub_unavailable"],
    [503, "hub_unavailable"],
    [400, "hub_rejected"],
    [404, "hub_rejected"],
    [422, "hub_rejected"],
  ])("a hub %i is %s", (status, reason) => {
    expect(hubReason(new HubApiError(status, undefined, `hub ${status}`))).toBe(reason);
  });

  it("no answer is hub_unavailable; a refused token grant is the hub answering", () => {
    expect(hubReason(new Error("fetch failed"))).toBe("hub_unavailable");
    expect(hubReason(Object.assign(new Error("invalid_client"), { status: 401, error: "invalid_client" }))).toBe(
      "hub_unauthorized",
    );
    expect(hubReason(Object.assign(new Error("invalid_request"), { status: 400, error: "invalid_request" }))).toBe(
      "hub_rejected",
    );
  });
});
