import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubApiError } from "@fm/clients";
import { controller, type ControllerSpec } from "./controller.ts";
import { Loop, LoopGaveUp } from "./loop.ts";
import { createAgentMetrics } from "./metrics.ts";
import { metricValue } from "./testing.ts";

const log = pino({ level: "silent" });
const opts = { intervalMs: 5, backoffBaseMs: 1, backoffMaxMs: 4, maxConsecutiveFailures: 3 };
const metricsFor = () => createAgentMetrics({ agent: "workflow", site: "s", satellite: "x" });

/** A controller over numbers; `act` decides per item. */
function numbers(
  items: () => Promise<number[]>,
  act: (n: number) => Promise<"done" | "skipped">,
  over: Partial<ControllerSpec<number, "done" | "skipped">> = {},
): ControllerSpec<number, "done" | "skipped"> {
  return {
    store: "ctl",
    actions: ["done", "skipped"],
    concurrency: 3,
    observe: items,
    act,
    describeItem: (n) => ({ item: n }),
    isItemFailure: (err) => err instanceof HubApiError && err.status < 500,
    classifyActError: () => "source_unavailable",
    ...over,
  };
}

describe("a controller on the loop engine", () => {
  it("acts on every observed item, at most `concurrency` at once, and counts what each came to", async () => {
    const metrics = metricsFor();
    let running = 0;
    let most = 0;
    const acted: number[] = [];
    const loop = new Loop(
      controller(
        numbers(
          async () => [1, 2, 3, 4, 5, 6, 7],
          async (n) => {
            most = Math.max(most, ++running);
            await new Promise((r) => setImmediate(r));
            running--;
            acted.push(n);
            return n % 2 ? "done" : "skipped";
          },
        ),
      ),
      opts,
      metrics,
      log,
    );
    expect(loop.kind).toBe("controller");
    expect(await loop.cycle(new AbortController().signal)).toMatchObject({
      observed: 7,
      done: 4,
      skipped: 3,
      failed: 0,
    });
    expect(acted.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
    expect(await metricValue(metrics, "fleet_manager_controller_actions_total", { store: "ctl", action: "done" })).toBe(
      4,
    );
    expect(await metricValue(metrics, "fleet_manager_reflector_items", { store: "ctl" })).toBe(7);
    expect(await metricValue(metrics, "fleet_manager_reflector_last_success_timestamp_seconds", { store: "ctl" })).toBe(
      loop.lastSuccessAt! / 1000,
    );
  });

  it("one item failing is that item's problem: counted, and the cycle still succeeds", async () => {
    const metrics = metricsFor();
    const loop = new Loop(
      controller(
        numbers(
          async () => [1, 2, 3],
          async (n) => {
            if (n === 1) throw new Error("ECONNRESET"); // an outage, but not of every item
            if (n === 2) throw new HubApiError(409, undefined, "stale"); // the item's own problem
            return "done";
          },
        ),
      ),
      opts,
      metrics,
      log,
    );
    expect(await loop.cycle(new AbortController().signal)).toMatchObject({ observed: 3, done: 1, failed: 2 });
    expect(
      await metricValue(metrics, "fleet_manager_controller_actions_total", { store: "ctl", action: "failed" }),
    ).toBe(2);
    expect(loop.cycles).toBe(1);
  });

  it("every item failing for want of an answer fails the cycle; after N in a row the controller gives up", async () => {
    const metrics = metricsFor();
    let cycles = 0;
    const loop = new Loop(
      controller(
        numbers(
          async () => (cycles++ === 0 ? [] : [1, 2]),
          async () => {
            throw new Error("ECONNREFUSED");
          },
        ),
      ),
      opts,
      metrics,
      log,
    );
    const err = await loop.run(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopGaveUp);
    // Nothing observed is no outage (a success); then three cycles where both items failed.
    expect(cycles).toBe(4);
    expect(loop.cycles).toBe(1);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", {
        store: "ctl",
        reason: "source_unavailable",
      }),
    ).toBe(3);
    expect(await metricValue(metrics, "fleet_manager_reflector_consecutive_failures", { store: "ctl" })).toBe(3);
  });

  it("a failed observation is a failed cycle, with its reason, and nothing is acted on", async () => {
    const metrics = metricsFor();
    let acted = 0;
    const loop = new Loop(
      controller(
        numbers(
          async () => {
            throw new HubApiError(503, undefined, "down");
          },
          async () => (acted++, "done"),
          { classifyObserveError: () => "hub_unavailable" },
        ),
      ),
      opts,
      metrics,
      log,
    );
    await expect(loop.run(new AbortController().signal)).rejects.toBeInstanceOf(LoopGaveUp);
    expect(acted).toBe(0);
    expect(
      await metricValue(metrics, "fleet_manager_reflector_errors_total", { store: "ctl", reason: "hub_unavailable" }),
    ).toBe(3);
  });
});
