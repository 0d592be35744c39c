/**
 * The metrics every agent exports. Names are fixed by the runbook and dashboards
 * (FleetManagerOpenStackStateStale, "Ironic reflector age"): the store label is the
 * reflector's store name, e.g. `ironic-nodes-overcloud`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function createAgentMetrics(labels: { agent: string; site: string; satellite: string }) {
  const registry = new Registry();
  // Includes process_start_time_seconds, which the restart-loop alert reads.
  collectDefaultMetrics({ register: registry });
  const lastSuccess = new Gauge({
    name: "fleet_manager_reflector_last_success_timestamp_seconds",
    help: "Unix time of the reflector's last complete cycle (listed and accepted by the hub)",
    labelNames: ["store"],
    registers: [registry],
  });
  const listDuration = new Histogram({
    name: "fleet_manager_reflector_list_duration_seconds",
    help: "Time to list the source's complete view",
    labelNames: ["store"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const pushDuration = new Histogram({
    name: "fleet_manager_reflector_push_duration_seconds",
    help: "Time for the hub to accept and apply one pushed view",
    labelNames: ["store"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const errors = new Counter({
    name: "fleet_manager_reflector_errors_total",
    help: "Failed reflector cycles (and failed side steps) by reason",
    labelNames: ["store", "reason"],
    registers: [registry],
  });
  const consecutiveFailures = new Gauge({
    name: "fleet_manager_reflector_consecutive_failures",
    help: "Failed cycles in a row; the process exits when it reaches FM_MAX_CONSECUTIVE_FAILURES",
    labelNames: ["store"],
    registers: [registry],
  });
  const items = new Gauge({
    name: "fleet_manager_reflector_items",
    help: "Items in the last listed view",
    labelNames: ["store"],
    registers: [registry],
  });
  const age = new Gauge({
    name: "fleet_manager_reflector_age_seconds",
    help: "Seconds since the reflector's last success (since process start if it never succeeded)",
    labelNames: ["store"],
    registers: [registry],
  });
  new Gauge({
    name: "fleet_manager_agent_info",
    help: "Which agent, site and satellite this process is",
    labelNames: ["agent", "site", "satellite"],
    registers: [registry],
  }).set(labels, 1);
  return { registry, lastSuccess, listDuration, pushDuration, errors, consecutiveFailures, items, age };
}
export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
