/**
 * Every process's /metrics as Prometheus's own linter reads it: `promtool check metrics` (from
 * scripts/peers/prometheus.sh) must exit 0 and say nothing about the hub's, a satellite agent's
 * and a connector's exposition, each scraped from the server the process itself runs for it.
 */
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { startTestHub } from "../apps/hub/src/testing/test-hub.ts";
import { listen as listenAgent } from "../apps/satellite-agents/src/runtime/health.ts";
import { Loop } from "../apps/satellite-agents/src/runtime/loop.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import { reflector } from "../apps/satellite-agents/src/runtime/reflector.ts";
import { listen as listenConnector } from "../apps/connectors/src/health.ts";
import { createConnectorMetrics } from "../apps/connectors/src/metrics.ts";

const log = pino({ level: "silent" });
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** `promtool check metrics` on `text` (its standard input): exit code and everything it printed. */
function checkMetrics(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "ENOENT" ? new Error("promtool is not installed: run scripts/peers/prometheus.sh install") : err,
      ),
    );
    child.on("close", (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  // Node's default metrics are there (and so the gauges promtool once refused would be).
  expect(text).toMatch(/nodejs_active_handles/);
  return text;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

describe("promtool check metrics", () => {
  it("finds nothing to say about the hub's /metrics", async () => {
    const hub = await startTestHub();
    try {
      await hub.app.ready();
      // A request first, so the RED metrics have series too.
      await hub.app.inject({ url: "/api/v1/sites" });
      const res = await hub.app.inject({ url: "/metrics" });
      expect(res.statusCode).toBe(200);
      expect(res.body).toMatch(/nodejs_active_handles/);
      expect(res.body).toContain("http_requests_total");
      expect(await checkMetrics(res.body)).toEqual({ code: 0, output: "" });
    } finally {
      await hub.close();
    }
  });

  it("finds nothing to say about a satellite agent's /metrics", async () => {
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    const loop = new Loop(
      reflector({ store: "ironic-nodes-overcloud", list: async () => [], push: async () => ({}) }),
      { intervalMs: 5, backoffBaseMs: 1, backoffMaxMs: 4, maxConsecutiveFailures: 3 },
      metrics,
      log,
    );
    await loop.cycle(new AbortController().signal);
    const server = await listenAgent(
      { METRICS_PORT: 0, METRICS_HOST: "127.0.0.1" },
      metrics,
      () => ({ started: true, loops: [loop] }),
      log,
    );
    servers.push(server);
    const text = await scrape(`http://127.0.0.1:${portOf(server)}/metrics`);
    expect(text).toContain("fleet_manager_reflector_age_seconds");
    expect(await checkMetrics(text)).toEqual({ code: 0, output: "" });
  });

  it("finds nothing to say about a connector's /metrics", async () => {
    const metrics = createConnectorMetrics("matrix-test", {
      stats: async () => ({ undelivered: 2, oldestUndeliveredAgeS: 5, deadLetters: 0 }),
      lag: () => ({ events: 1, seconds: 3 }),
    });
    metrics.enqueued.inc({ origin: "feed" });
    const server = await listenConnector(
      0,
      "127.0.0.1",
      metrics.registry,
      async () => ({ ready: true, body: {} }),
      log,
    );
    servers.push(server);
    const text = await scrape(`http://127.0.0.1:${portOf(server)}/metrics`);
    expect(text).toContain("fleet_manager_connector_records_enqueued_total");
    expect(await checkMetrics(text)).toEqual({ code: 0, output: "" });
  });
});
