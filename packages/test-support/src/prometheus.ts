/**
 * A real Prometheus server and a real blackbox exporter for tests, both from Debian
 * (scripts/peers/prometheus.sh): each on a free port with its state in a scratch folder,
 * stopped with SIGTERM. Prometheus is ready at /-/ready (its first scrape can take a few
 * seconds even with a 1 s interval: callers poll, they do not sleep); its HTTP query API is
 * the one Mimir serves.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { eventually } from "./wait.ts";

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusPeer {
  url: string;
  /** An instant query (`/api/v1/query`): the samples of its vector result. */
  query(promql: string): Promise<Sample[]>;
  /** The loaded alerting rules by group (`/api/v1/rules`). */
  rules(): Promise<{ name: string; rules: { name: string; health: string; lastError?: string }[] }[]>;
  stop(): Promise<void>;
}

export interface BlackboxPeer {
  /** host:port to scrape `/probe` on. */
  address: string;
  stop(): Promise<void>;
}

interface Spawned {
  proc: ChildProcess;
  output: string[];
  exited: Promise<unknown>;
}

function run(cmd: string, args: string[]): Spawned {
  const proc = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  proc.stdout.on("data", (d: Buffer) => output.push(d.toString()));
  proc.stderr.on("data", (d: Buffer) => output.push(d.toString()));
  const exited = new Promise((resolve) => proc.on("close", resolve));
  proc.on("error", (err) => output.push(`${cmd}: ${err.message} (installed by scripts/peers/prometheus.sh?)`));
  return { proc, output, exited };
}

async function stopped(s: Spawned): Promise<void> {
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGTERM");
  await s.exited;
}

async function waitForHttp(s: Spawned, url: string, what: string): Promise<void> {
  await eventually(async () => {
    if (s.proc.exitCode !== null) throw new Error(`${what} exited:\n${s.output.join("")}`);
    const res = await fetch(url).catch((err: unknown) => {
      throw new Error(`${what} not answering yet: ${String(err)}\n${s.output.join("").slice(-2000)}`);
    });
    if (!res.ok) throw new Error(`${what}: ${res.status}`);
  }, 30_000);
}

/** The blackbox exporter with the http_2xx module (a plain HTTP GET expecting a 2xx). */
export async function startBlackboxExporter(): Promise<BlackboxPeer> {
  const dir = await mkdtemp(join(tmpdir(), "fm-blackbox-"));
  const config = join(dir, "blackbox.yml");
  await writeFile(config, "modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n");
  const port = await freePort();
  const s = run("prometheus-blackbox-exporter", [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`]);
  const stop = async () => {
    await stopped(s);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(s, `http://127.0.0.1:${port}/metrics`, "blackbox exporter");
  } catch (err) {
    await stop();
    throw err;
  }
  return { address: `127.0.0.1:${port}`, stop };
}

/**
 * Prometheus with the given configuration (YAML text; rule file paths absolute). `routePrefix`
 * serves every path under it (`/prometheus`, as Mimir serves its query API); `url` includes it.
 */
export async function startPrometheus(
  configYaml: string,
  opts: { routePrefix?: string } = {},
): Promise<PrometheusPeer> {
  const dir = await mkdtemp(join(tmpdir(), "fm-prometheus-"));
  const config = join(dir, "prometheus.yml");
  await writeFile(config, configYaml);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}${opts.routePrefix ?? ""}`;
  const s = run("prometheus", [
    `--config.file=${config}`,
    `--web.listen-address=127.0.0.1:${port}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    ...(opts.routePrefix ? [`--web.route-prefix=${opts.routePrefix}`] : []),
  ]);
  const stop = async () => {
    await stopped(s);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(s, `${url}/-/ready`, "prometheus");
  } catch (err) {
    await stop();
    throw err;
  }
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    async query(promql) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(promql)}`,
      );
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async rules() {
      const data = await api<{
        groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
      }>("/api/v1/rules?type=alert");
      return data.groups;
    },
    stop,
  };
}
