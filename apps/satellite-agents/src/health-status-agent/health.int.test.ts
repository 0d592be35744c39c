/**
 * The default rules on a real Prometheus (Debian 2.42) scraping an exporter the test controls,
 * which serves node-exporter- and DCGM-exporter-shaped series (metric and label names as cited in
 * ./rules.ts). Prometheus serves under /prometheus, the prefix Mimir's query API has.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "@fm/clients";
import { dcgmGpuLabels, setHealthyGpus, startTestExporter, type TestExporter } from "@fm/test-support/exporter";
import { freePort } from "@fm/test-support/ports";
import { startPrometheus, type PrometheusPeer } from "@fm/test-support/prometheus";
import { eventually } from "@fm/test-support/wait";
import { readHealth } from "./agent.ts";
import { DEFAULT_RULES } from "./rules.ts";

const DEVICES = ["gpu-node-01", "gpu-node-02", "gpu-node-03"];
let exporter: TestExporter;
let prometheus: PrometheusPeer;
let client: PrometheusClient;

const gpus = (host: string, count: number) => setHealthyGpus(exporter, host, count, 55);

beforeAll(async () => {
  exporter = await startTestExporter();
  const silent = await freePort(); // a node exporter that does not answer
  gpus("gpu-node-01", 8);
  gpus("gpu-node-03", 7);
  exporter.set("/dcgm", "DCGM_FI_DEV_GPU_TEMP", dcgmGpuLabels("gpu-node-03", 3), 95);
  exporter.set("/node", "node_infiniband_state_id", { device: "mlx5_0", port: "1" }, 4);
  exporter.set("/node", "node_infiniband_state_id", { device: "mlx5_1", port: "1" }, 1);
  prometheus = await startPrometheus(
    `global: { scrape_interval: 1s }
scrape_configs:
  - job_name: node
    metrics_path: /node
    static_configs:
      - targets: ["${exporter.address}"]
        labels: { instance: "gpu-node-03:9100" }
      - targets: ["127.0.0.1:${silent}"]
        labels: { instance: "gpu-node-02.site.example:9100" }
  - job_name: dcgm
    metrics_path: /dcgm
    static_configs:
      - targets: ["${exporter.address}"]
`,
    { routePrefix: "/prometheus" },
  );
  client = new PrometheusClient({ baseUrl: prometheus.url });
  await eventually(async () => {
    expect(await prometheus.query("up")).toHaveLength(3);
    expect(await prometheus.query("DCGM_FI_DEV_GPU_TEMP")).toHaveLength(15);
  }, 60_000);
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
});

describe("the default health rules on a real Prometheus", () => {
  it("report a silent node exporter, a missing and a hot GPU, a port down; then an XID burst", async () => {
    const before = await readHealth(client, DEFAULT_RULES, DEVICES);
    expect(before.items).toEqual([
      { name: "gpu-node-01", status: "ok", conditions: [] },
      {
        name: "gpu-node-02",
        status: "critical",
        conditions: [
          {
            name: "NodeExporterDown",
            status: "critical",
            message: "node exporter on gpu-node-02.site.example:9100 is not answering scrapes",
          },
        ],
      },
      {
        name: "gpu-node-03",
        status: "critical",
        conditions: [
          { name: "GpuMissing", status: "critical", message: "only 7 of 8 GPUs visible: a GPU has fallen off the bus" },
          { name: "GpuTemperatureHigh", status: "warning", message: "GPU 3 at 95 °C (over 90 °C)" },
          {
            name: "InfinibandPortDown",
            status: "critical",
            message: "InfiniBand port mlx5_1/1 is not active (state 1)",
          },
        ],
      },
    ]);

    exporter.set("/dcgm", "DCGM_FI_DEV_XID_ERRORS", dcgmGpuLabels("gpu-node-01", 2), 79);
    const after = await eventually(async () => {
      const r = await readHealth(client, DEFAULT_RULES, DEVICES);
      expect(r.items[0]!.status).toBe("critical");
      return r;
    }, 30_000);
    expect(after.items[0]).toEqual({
      name: "gpu-node-01",
      status: "critical",
      conditions: [
        { name: "GpuXidErrors", status: "critical", message: "GPU 2 reported XID 79 in the last 10 minutes" },
      ],
    });
  });
});
