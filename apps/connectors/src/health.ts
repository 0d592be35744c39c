/**
 * The port every Fleet Manager process serves (METRICS_PORT), as the satellite agents do:
 * `/healthz` (liveness: the process serves; its body is the delivery state), `/readyz` (the
 * instance holds its lock and has read the feed once), `/metrics` (Prometheus).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Registry } from "prom-client";

export function listen(
  port: number,
  host: string,
  registry: Registry,
  state: () => Promise<{ ready: boolean; body: Record<string, unknown> }>,
  log: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, { allow: "GET, HEAD" }).end();
    const fail = () => json(res, 503, { status: "unavailable" });
    if (path === "/healthz") {
      // Liveness stays 200 while the sink or the connector's database is down: restarting
      // would bring neither back. The body says what it could not read.
      state().then(
        ({ ready, body }) => json(res, 200, { status: "ok", ready, ...body }),
        () => json(res, 200, { status: "ok", ready: false, stats: "unavailable" }),
      );
    } else if (path === "/readyz") {
      state().then(({ ready }) => json(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready" }), fail);
    } else if (path === "/metrics") {
      registry
        .metrics()
        .then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text))
        .catch(() => res.writeHead(500).end());
    } else json(res, 404, { status: 404, title: "Not Found" });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const addr = server.address();
      log.info(
        { metricsPort: typeof addr === "object" && addr ? addr.port : port },
        "connector listening for /healthz and /metrics",
      );
      resolve(server);
    });
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
