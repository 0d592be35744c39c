/**
 * The port every agent process serves (METRICS_PORT): `/healthz` (liveness: the process serves),
 * `/readyz` (started, and every loop has succeeded once) and `/metrics` (Prometheus).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { CommonConfig } from "./config.ts";
import type { Loop } from "./loop.ts";
import type { AgentMetrics } from "./metrics.ts";

/** What the port reports, read at each request. */
export interface HealthState {
  /** Setup is done and the process runs its work. */
  started: boolean;
  loops: readonly Loop[];
}

export function listen(
  config: Pick<CommonConfig, "METRICS_PORT" | "METRICS_HOST">,
  metrics: AgentMetrics,
  state: () => HealthState,
  log: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const { started, loops } = state();
    if (path === "/healthz") {
      // Liveness: the process serves. Loop health is in /metrics and /readyz: a failing source
      // must not make Kubernetes kill an agent that is correctly backing off.
      const body = Object.fromEntries(
        loops.map((l) => [
          l.store,
          { kind: l.kind, ageSeconds: l.ageSeconds(), consecutiveFailures: l.consecutiveFailures, cycles: l.cycles },
        ]),
      );
      json(res, 200, { status: "ok", ready: started, reflectors: body });
    } else if (path === "/readyz") {
      const ok = started && loops.every((l) => l.lastSuccessAt !== undefined);
      json(res, ok ? 200 : 503, { status: ok ? "ready" : "not ready" });
    } else if (path === "/metrics") {
      for (const l of loops) metrics.age.set({ store: l.store }, l.ageSeconds());
      metrics.registry
        .metrics()
        .then((text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text))
        .catch(() => res.writeHead(500).end());
    } else {
      json(res, 404, { status: 404, title: "Not Found" });
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.METRICS_PORT, config.METRICS_HOST, () => {
      const addr = server.address();
      log.info(
        { metricsPort: typeof addr === "object" && addr ? addr.port : config.METRICS_PORT },
        "agent listening for /healthz and /metrics",
      );
      resolve(server);
    });
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
