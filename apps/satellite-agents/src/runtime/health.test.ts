import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { listen } from "./health.ts";
import { Loop } from "./loop.ts";
import { createAgentMetrics, type AgentMetrics } from "./metrics.ts";
import { reflector } from "./reflector.ts";

const log = pino({ level: "silent" });
const opts = { intervalMs: 5, backoffBaseMs: 1, backoffMaxMs: 4, maxConsecutiveFailures: 3 };
let close: (() => Promise<void>) | undefined;
afterEach(() => close?.());

/** An agent's port on a free local port, reporting `state`. */
async function port(metrics: AgentMetrics, state: () => { started: boolean; loops: Loop[] }) {
  const server = await listen({ METRICS_PORT: 0, METRICS_HOST: "127.0.0.1" }, metrics, state, log);
  close = () => new Promise((r) => server.close(() => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the agent's /healthz /readyz /metrics port", () => {
  it("is live from the start, ready once started and every loop has succeeded, and serves the loops' ages", async () => {
    let clock = 1_000_000;
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const loop = new Loop(
      reflector({ store: "ironic-nodes-overcloud", list: async () => [], push: async () => ({}) }),
      opts,
      metrics,
      log,
      () => clock,
    );
    let started = false;
    const url = await port(metrics, () => ({ started, loops: started ? [loop] : [] }));

    const live = await fetch(`${url}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok", ready: false, reflectors: {} });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);

    started = true;
    clock += 7_000;
    expect((await fetch(`${url}/readyz`)).status).toBe(503); // the loop has not succeeded yet
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({
      status: "ok",
      ready: true,
      reflectors: { "ironic-nodes-overcloud": { kind: "reflector", ageSeconds: 7, consecutiveFailures: 0, cycles: 0 } },
    });
    await loop.cycle(new AbortController().signal);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
  });

  it("serves the metrics with each loop's age as of the scrape, and refuses other methods and paths", async () => {
    let clock = 1_000_000;
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const loop = new Loop(
      reflector({ store: "netbox-devices", list: async () => [], push: async () => ({}) }),
      opts,
      metrics,
      log,
      () => clock,
    );
    const url = await port(metrics, () => ({ started: true, loops: [loop] }));
    clock += 12_500;
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('fleet_manager_reflector_age_seconds{store="netbox-devices"} 12.5');
    expect(text).toContain('fleet_manager_agent_info{agent="openstack",site="s",satellite="x"} 1');
    expect((await fetch(`${url}/metrics`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${url}/nope`)).status).toBe(404);
  });
});
