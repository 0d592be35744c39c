import { Gauge, type Registry } from "prom-client";
import { SITE_SOURCE_SILENCE_METRIC } from "@fm/domain";
import type { SiteService } from "./service.ts";

/**
 * `fleet_manager_site_source_silence_seconds{site,source}`: seconds since the hub last accepted
 * a reflection of the source for the site, read from the database at scrape time, so it is the
 * same on every replica whichever one took the push, and keeps growing when no push arrives.
 */
export function registerSiteMetrics(registry: Registry, service: SiteService): void {
  new Gauge({
    name: SITE_SOURCE_SILENCE_METRIC,
    help: "Seconds since the hub last accepted a reflection of the source for the site",
    labelNames: ["site", "source"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await service.silence()) this.set({ site: s.slug, source: s.source }, s.silenceSeconds);
    },
  });
}
