import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { dropMisnamedDefaultMetrics } from "@fm/domain";

export interface MetricsOptions {
  registry: Registry;
}

/** Creates the registry a hub process exposes on /metrics, with Node's default metrics. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  dropMisnamedDefaultMetrics(registry);
  return registry;
}

/**
 * RED metrics per route. `route` is the route template (`/api/v1/sites/:id`), never the raw
 * URL, so ids cannot explode the series count; requests that match no route are `unmatched`.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { registry }) => {
    const requests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests served, by method, route template and status code",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    });
    const duration = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration from receipt to response, seconds",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });

    app.addHook("onResponse", async (request, reply) => {
      const route = request.routeOptions.url ?? "unmatched";
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
    });

    app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: "metrics" },
);
