/**
 * Names of the metrics Fleet Manager exports that the runbook's alerts and the SEV-1 dashboard
 * read (infra/alerts/, infra/dashboards/). One definition: the agents register these names, a
 * future exporter (the Matrix connector) must register exactly its name, and the alert tests
 * refuse a rule that reads a `fleet_manager_*` metric not listed here.
 */

/** Every loop of a satellite agent, reflector or controller, by its `store` label. */
export const REFLECTOR_METRICS = {
  lastSuccess: "fleet_manager_reflector_last_success_timestamp_seconds",
  /** Seconds since the loop's last success: what FleetManagerOpenStackStateStale and FleetManagerWorkflowAgentStale read. */
  age: "fleet_manager_reflector_age_seconds",
  listDuration: "fleet_manager_reflector_list_duration_seconds",
  pushDuration: "fleet_manager_reflector_push_duration_seconds",
  errors: "fleet_manager_reflector_errors_total",
  consecutiveFailures: "fleet_manager_reflector_consecutive_failures",
  items: "fleet_manager_reflector_items",
} as const;

/**
 * The Matrix connector's freshness: a gauge, seconds since the hub committed the oldest change
 * the sink has not acknowledged yet, in its delivery queue or not read from the feed yet (0 when
 * none waits): the age of what the customer has not seen, however long it waited to be read or
 * delivered. A reader that cannot read the feed counts from when it last had every event.
 * Labelled `connector` with the instance name (e.g. `matrix-prod`). FleetManagerMatrixFeedStalled
 * fires when it stays above 900 for 10 minutes.
 */
export const MATRIX_OLDEST_UNDELIVERED_EVENT_AGE = "fleet_manager_matrix_oldest_undelivered_event_age_seconds";

/**
 * The hub's own view of each satellite: seconds since it last accepted a reflection of a
 * source for a site, labelled `site` (slug) and `source`. Read from the database at scrape
 * time, so it grows while a site is silent even when the satellite's monitoring is gone.
 */
export const SITE_SOURCE_SILENCE_METRIC = "fleet_manager_site_source_silence_seconds";

/** Open discrepancies between the sources, labelled `site` (slug) and `kind` (DISCREPANCY_KINDS). */
export const DISCREPANCIES_METRIC = "fleet_manager_discrepancies";

/** Every `fleet_manager_*` metric an alert or dashboard may read. */
export const ALERTED_METRICS: readonly string[] = [
  ...Object.values(REFLECTOR_METRICS),
  MATRIX_OLDEST_UNDELIVERED_EVENT_AGE,
  SITE_SOURCE_SILENCE_METRIC,
  DISCREPANCIES_METRIC,
];

/**
 * prom-client's default metrics include three gauges named like counters
 * (`nodejs_active_handles_total`, `…_requests_total`, `…_resources_total`), which
 * `promtool check metrics` refuses ("non-counter metrics should not have _total suffix"). They
 * are the sums of `nodejs_active_handles{type}`, `nodejs_active_requests{type}` and
 * `nodejs_active_resources{type}`, which stay: `sum(nodejs_active_handles)` is the same number.
 */
export const MISNAMED_DEFAULT_METRICS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
] as const;

/** Removes MISNAMED_DEFAULT_METRICS (under the prefix given to collectDefaultMetrics) from a prom-client registry. */
export function dropMisnamedDefaultMetrics(registry: { removeSingleMetric(name: string): void }, prefix = ""): void {
  for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(prefix + name);
}
