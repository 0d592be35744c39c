import { Gauge, type Registry } from "prom-client";
import { DISCREPANCIES_METRIC } from "@fm/domain";
import type { DiscrepancyService } from "./service.ts";

/**
 * `fleet_manager_discrepancies{site,kind}`: counted from the database at scrape time, so every
 * replica reports the same numbers. A (site, kind) that cleared is no longer exported.
 */
export function registerDiscrepancyMetrics(registry: Registry, service: DiscrepancyService): void {
  new Gauge({
    name: DISCREPANCIES_METRIC,
    help: "Open discrepancies between the sources, by site slug and kind",
    labelNames: ["site", "kind"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const c of await service.counts()) this.set({ site: c.slug, kind: c.kind }, c.n);
    },
  });
}
