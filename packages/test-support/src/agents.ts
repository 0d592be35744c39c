/** Satellite agents and connectors as real processes, the way `npm run agent -- <name>` and `npm run connector` run them. */
import { spawn } from "node:child_process";
import { REPO_ROOT, onJsonLines } from "./process.ts";

export interface AgentProcess {
  logs: Record<string, unknown>[];
  stderr: string[];
  exited: Promise<number | string>;
  /** Base URL of the agent's /healthz and /metrics port. */
  metricsUrl: string;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  /** Resolves with the first log line (already written or to come) that matches. */
  waitForLog(match: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** One metric sample from /metrics, or undefined when the series is absent. */
  metric(name: string, labels?: Record<string, string>): Promise<number | undefined>;
}

/** The node arguments that run a satellite process: from source under tsx (as `npm run agent`), or built. */
export const agentArgs = (kind: string, built = false): string[] =>
  built ? ["apps/satellite-agents/dist/main.js", kind] : ["--import", "tsx", "apps/satellite-agents/src/main.ts", kind];

export function startAgent(
  kind: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
  opts: { built?: boolean } = {},
): Promise<AgentProcess> {
  return startPortProcess(agentArgs(kind, opts.built), env, "agent listening for /healthz and /metrics", timeoutMs);
}

/** A connector instance, the way `npm run connector` runs it (apps/connectors). */
export function startConnector(env: Record<string, string>, timeoutMs = 30_000): Promise<AgentProcess> {
  return startPortProcess(
    ["--import", "tsx", "apps/connectors/src/main.ts"],
    env,
    "connector listening for /healthz and /metrics",
    timeoutMs,
  );
}

/** A process that serves /healthz and /metrics on METRICS_PORT=0 and logs the port it got in `listening`. */
async function startPortProcess(
  args: string[],
  env: Record<string, string>,
  listeningMessage: string,
  timeoutMs: number,
): Promise<AgentProcess> {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      METRICS_PORT: "0",
      METRICS_HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const waiters = new Set<{
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }>();
  onJsonLines(
    proc.stdout,
    (l) => {
      logs.push(l);
      for (const w of waiters) {
        if (!w.match(l)) continue;
        waiters.delete(w);
        w.resolve(l);
      }
    },
    (t) => stderr.push(t),
  );
  proc.stderr.on("data", (d: Buffer) => stderr.push(d.toString()));
  // "close", not "exit": the last log lines are read only once stdout has closed.
  const exited = new Promise<number | string>((resolve) =>
    proc.on("close", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const dump = () => `${stderr.join("")}\n${logs.map((l) => JSON.stringify(l)).join("\n")}`;

  const waitForLog = (match: (l: Record<string, unknown>) => boolean, ms = 30_000) => {
    const found = logs.find(match);
    if (found) return Promise.resolve(found);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const w = { match, resolve: (l: Record<string, unknown>) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(
        () => (waiters.delete(w), reject(new Error(`agent log line not seen within ${ms} ms:\n${dump()}`))),
        ms,
      );
      waiters.add(w);
    });
  };

  const listening = await Promise.race([
    waitForLog((l) => l.msg === listeningMessage, timeoutMs),
    exited.then((c) => {
      throw new Error(`agent exited (${c}) before listening:\n${dump()}`);
    }),
  ]).catch((err: unknown) => {
    // Never leave a process behind that its caller has no handle to stop.
    proc.kill("SIGKILL");
    throw err;
  });
  const metricsUrl = `http://127.0.0.1:${String(listening.metricsPort)}`;
  return {
    logs,
    stderr,
    exited,
    metricsUrl,
    waitForLog,
    stop: async (signal: NodeJS.Signals = "SIGTERM") => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    metric: async (name, labels = {}) => {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      return parseMetric(text, name, labels);
    },
  };
}

/** The value of the first sample of `name` whose labels include `labels` (Prometheus text format). */
export function parseMetric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}
