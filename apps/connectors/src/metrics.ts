/**
 * The connector's Prometheus metrics, each labelled `connector` with the instance name. The
 * freshness gauge is the name the runbook's FleetManagerMatrixFeedStalled alert reads
 * (@fm/domain MATRIX_OLDEST_UNDELIVERED_EVENT_AGE): the older of the queue's oldest record and
 * the reader's lag in seconds, so a reader that cannot read pages too. The queue gauges are read from the database
 * at scrape time, so they tell the truth about what is durable, not about this process's memory.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { MATRIX_OLDEST_UNDELIVERED_EVENT_AGE, dropMisnamedDefaultMetrics } from "@fm/domain";
import type { QueueStats } from "./queue/store.ts";

export interface FeedLag {
  events: number;
  seconds: number;
}

export function createConnectorMetrics(connector: string, read: { stats(): Promise<QueueStats>; lag(): FeedLag }) {
  const registry = new Registry();
  registry.setDefaultLabels({ connector });
  const prefix = "fleet_manager_connector_process_";
  collectDefaultMetrics({ register: registry, prefix });
  dropMisnamedDefaultMetrics(registry, prefix);
  let stats: Promise<QueueStats> | undefined;
  // One query per scrape for the three gauges that read the queue.
  const queue = () => (stats ??= read.stats().finally(() => setTimeout(() => (stats = undefined), 0)));
  new Gauge({
    name: MATRIX_OLDEST_UNDELIVERED_EVENT_AGE,
    help: "Seconds since the hub committed the oldest change the sink has not acknowledged, queued or not yet read (0: none waiting)",
    registers: [registry],
    async collect() {
      // A change the reader could not read yet is as undelivered as a queued one.
      this.set(Math.max((await queue()).oldestUndeliveredAgeS, read.lag().seconds));
    },
  });
  new Gauge({
    name: "fleet_manager_connector_undelivered_records",
    help: "Records in the delivery queue",
    registers: [registry],
    async collect() {
      this.set((await queue()).undelivered);
    },
  });
  new Gauge({
    name: "fleet_manager_connector_dead_letters",
    help: "Records the sink refused for good, kept in the dead-letter table",
    registers: [registry],
    async collect() {
      this.set((await queue()).deadLetters);
    },
  });
  new Gauge({
    name: "fleet_manager_connector_feed_lag_events",
    help: "Hub feed head minus the connector's cursor",
    registers: [registry],
    collect() {
      this.set(read.lag().events);
    },
  });
  new Gauge({
    name: "fleet_manager_connector_feed_lag_seconds",
    help: "Seconds since the connector's cursor last reached the feed head (0 while caught up and reading)",
    registers: [registry],
    collect() {
      this.set(read.lag().seconds);
    },
  });
  return {
    registry,
    enqueued: new Counter({
      name: "fleet_manager_connector_records_enqueued_total",
      help: "Records written to the delivery queue from the feed or a snapshot",
      labelNames: ["origin"],
      registers: [registry],
    }),
    delivered: new Counter({
      name: "fleet_manager_connector_records_delivered_total",
      help: "Records the sink acknowledged",
      labelNames: ["sink"],
      registers: [registry],
    }),
    failures: new Counter({
      name: "fleet_manager_connector_failures_total",
      help: "Failed feed reads and deliveries, by error class (docs/connectors.md)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: "fleet_manager_connector_dead_lettered_total",
      help: "Records moved to the dead-letter table",
      registers: [registry],
    }),
    snapshots: new Counter({
      name: "fleet_manager_connector_snapshots_total",
      help: "Inventory snapshots read, by why (start, cursor_expired)",
      labelNames: ["reason"],
      registers: [registry],
    }),
  };
}
export type ConnectorMetrics = ReturnType<typeof createConnectorMetrics>;
