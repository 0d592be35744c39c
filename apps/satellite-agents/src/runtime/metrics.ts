/**
 * The metrics every agent exports. Names are fixed by the runbook and dashboards
 * (FleetManagerOpenStackStateStale, "Ironic reflector age", "Workflow agent: reflector age"):
 * every loop, reflector or controller, reports under `fleet_manager_reflector_*`, its store name
 * (e.g. `ironic-nodes-overcloud`, `workflow`) as the `store` label. Controllers add the
 * `fleet_manager_controller_*` series of what they did.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { REFLECTOR_METRICS, dropMisnamedDefaultMetrics } from "@fm/domain";

const BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createAgentMetrics(labels: { agent: string; site: string; satellite: string }) {
  const registry = new Registry();
  // Includes process_start_time_seconds, which the restart-loop alert reads.
  collectDefaultMetrics({ register: registry });
  dropMisnamedDefaultMetrics(registry);
  new Gauge({
    name: "fleet_manager_agent_info",
    help: "Which agent, site and satellite this process is",
    labelNames: ["agent", "site", "satellite"],
    registers: [registry],
  }).set(labels, 1);
  return { registry, ...loopMetrics(registry), ...controllerMetrics(registry) };
}
export type AgentMetrics = ReturnType<typeof createAgentMetrics>;

/** What every loop reports, under the names the runbook reads (defined in @fm/domain's metrics.ts). */
function loopMetrics(registry: Registry) {
  const lastSuccess = new Gauge({
    name: REFLECTOR_METRICS.lastSuccess,
    help: "Unix time of the loop's last successful cycle (a reflector: listed and accepted by the hub)",
    labelNames: ["store"],
    registers: [registry],
  });
  const listDuration = new Histogram({
    name: REFLECTOR_METRICS.listDuration,
    help: "Time to list the source's complete view (a controller: to observe what needs attention)",
    labelNames: ["store"],
    buckets: BUCKETS_S,
    registers: [registry],
  });
  const pushDuration = new Histogram({
    name: REFLECTOR_METRICS.pushDuration,
    help: "Time for the hub to accept and apply one pushed view",
    labelNames: ["store"],
    buckets: BUCKETS_S,
    registers: [registry],
  });
  const errors = new Counter({
    name: REFLECTOR_METRICS.errors,
    help: "Failed cycles (and failed side steps) by reason",
    labelNames: ["store", "reason"],
    registers: [registry],
  });
  const consecutiveFailures = new Gauge({
    name: REFLECTOR_METRICS.consecutiveFailures,
    help: "Failed cycles in a row; the process exits when those that count (an unavailable hub does not, for a loop that rides hub outages out) reach FM_MAX_CONSECUTIVE_FAILURES",
    labelNames: ["store"],
    registers: [registry],
  });
  const items = new Gauge({
    name: REFLECTOR_METRICS.items,
    help: "Items in the last listed view (a controller: items observed)",
    labelNames: ["store"],
    registers: [registry],
  });
  const age = new Gauge({
    name: REFLECTOR_METRICS.age,
    help: "Seconds since the loop's last success, or since it last read its source for a loop that rides hub outages out (the OpenStack agent); since process start if never",
    labelNames: ["store"],
    registers: [registry],
  });
  return { lastSuccess, listDuration, pushDuration, errors, consecutiveFailures, items, age };
}

/** What controllers add: their actions and the time acting took. */
function controllerMetrics(registry: Registry) {
  const actDuration = new Histogram({
    name: "fleet_manager_controller_act_duration_seconds",
    help: "Time a controller took to act on every item of one cycle",
    labelNames: ["store"],
    buckets: BUCKETS_S,
    registers: [registry],
  });
  const actions = new Counter({
    name: "fleet_manager_controller_actions_total",
    help: "A controller's actions on single items, by what they came to (failed: retried next cycle)",
    labelNames: ["store", "action"],
    registers: [registry],
  });
  return { actDuration, actions };
}
