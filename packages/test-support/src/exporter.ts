/**
 * A small metrics exporter the test controls: it serves the Prometheus text exposition format
 * (version 0.0.4) of the series the test sets, one path per exporter it plays (e.g. `/node` in the
 * node exporter's shape, `/dcgm` in the DCGM exporter's), for a real Prometheus to scrape.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface TestExporter {
  /** host:port to scrape. */
  address: string;
  /** Sets a series (name + labels) on a path to a value. */
  set(path: string, name: string, labels: Record<string, string>, value: number): void;
  /** Removes a series (as an exporter does for a GPU it no longer sees). */
  remove(path: string, name: string, labels: Record<string, string>): void;
  stop(): Promise<void>;
}

const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const seriesKey = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escape(labels[k]!)}"`)
    .join(",")}}`;

export async function startTestExporter(): Promise<TestExporter> {
  const paths = new Map<string, Map<string, number>>();
  const server = createServer((req, res) => {
    const series = paths.get(new URL(req.url ?? "/", "http://x").pathname);
    if (!series) {
      res.writeHead(404).end();
      return;
    }
    const lines = [...series].map(([key, value]) => `${key} ${value}`);
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(lines.join("\n") + "\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    set(path, name, labels, value) {
      const series = paths.get(path) ?? new Map<string, number>();
      paths.set(path, series);
      series.set(seriesKey(name, labels), value);
    },
    remove(path, name, labels) {
      paths.get(path)?.delete(seriesKey(name, labels));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The labels dcgm-exporter puts on a GPU's series (its default counters), for GPU `n` of `host`. */
export const dcgmGpuLabels = (host: string, n: number): Record<string, string> => ({
  gpu: String(n),
  UUID: `GPU-${host}-${n}`,
  device: `nvidia${n}`,
  modelName: "NVIDIA H100 80GB HBM3",
  Hostname: host,
});

/** Healthy GPUs on `host` as dcgm-exporter shows them on `/dcgm`: the temperature, and no XID. */
export function setHealthyGpus(exporter: TestExporter, host: string, count = 8, temp = 52): void {
  for (let n = 0; n < count; n++) {
    exporter.set("/dcgm", "DCGM_FI_DEV_GPU_TEMP", dcgmGpuLabels(host, n), temp);
    exporter.set("/dcgm", "DCGM_FI_DEV_XID_ERRORS", dcgmGpuLabels(host, n), 0);
  }
}
