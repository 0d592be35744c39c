/** Real hub processes for end-to-end tests: spawned as `npm start` would, talked to over HTTP. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));

export interface HubProcess {
  proc: ChildProcess;
  /** Base URL once ready, e.g. http://127.0.0.1:40123 */
  url: string;
  /** Every stdout line parsed as JSON (pino), plus stderr text. */
  logs: Record<string, unknown>[];
  stderr: string[];
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** The admin secret test hubs bootstrap with (FM_BOOTSTRAP_ADMIN_SECRET). */
export const ADMIN_SECRET = "e2e-admin-secret-not-for-production";
/** One key encryption key for every test hub, so hubs sharing a database share signing keys. */
export const TEST_KEK = Buffer.alloc(32, 7).toString("base64");

/** A client-credentials token from a running hub (client_secret_basic). */
export async function clientToken(url: string, clientId: string, secret: string, scope?: string): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) }),
  });
  if (!res.ok) throw new Error(`token request for ${clientId} failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface HubAnswer<T> {
  status: number;
  body: T;
  headers: Headers;
}
export type HubApi = <T = unknown>(
  path: string,
  init?: { method?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<HubAnswer<T>>;

/** Calls a hub's API as a caller would: JSON in and out, the token given (read at each call). */
export function hubApi(baseUrl: () => string, token: () => string): HubApi {
  return async (path, init = {}) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method: init.method ?? "GET",
      headers: {
        ...bearer(token()),
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as never, headers: res.headers };
  };
}

export interface HubLogOptions {
  /**
   * "all" (default) keeps every log line, parsed; "errors" parses and keeps the lines up to
   * "hub ready" and then only errors, so a process driving load on the hub (a benchmark) does
   * not spend itself parsing the two lines a request logs at the production level.
   */
  keepLogs?: "all" | "errors";
  /** Run the built hub (`npm run build`: plain node on apps/hub/dist) instead of the sources under tsx. */
  built?: boolean;
  /** Extra node options, e.g. ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] (not allowed in NODE_OPTIONS). */
  nodeArgs?: string[];
}

/** The node arguments that run the hub: from source under tsx (as `npm start`), or built. */
export const hubArgs = (built = false): string[] =>
  built ? ["apps/hub/dist/main.js"] : ["--import", "tsx", "apps/hub/src/main.ts"];

export function spawnHub(
  env: Record<string, string | undefined>,
  opts: HubLogOptions = {},
): {
  proc: ChildProcess;
  logs: Record<string, unknown>[];
  stderr: string[];
  exited: Promise<number | string>;
} {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...hubArgs(opts.built)], {
    cwd: REPO_ROOT,
    env: dropUndefined({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: "0",
      LOG_LEVEL: "info",
      FM_BOOTSTRAP_ADMIN_SECRET: ADMIN_SECRET,
      FM_KEY_ENCRYPTION_KEY: TEST_KEK,
      ...env,
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let ready = false;
  onJsonLines(
    proc.stdout,
    (l) => {
      logs.push(l);
      if (l.msg === "hub ready") ready = true;
    },
    (text) => stderr.push(text),
    opts.keepLogs === "errors" ? (line) => !ready || /"level":"(ERROR|FATAL)"/.test(line) : undefined,
  );
  proc.stderr.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    proc.on("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return { proc, logs, stderr, exited };
}

/**
 * Calls `onJson` for each JSON line a stream writes (pino logs), `onText` for any other line;
 * lines `accept` refuses are dropped unparsed.
 */
export function onJsonLines(
  stream: NodeJS.ReadableStream,
  onJson: (line: Record<string, unknown>) => void,
  onText: (line: string) => void = () => {},
  accept: (line: string) => boolean = () => true,
): void {
  let buf = "";
  stream.on("data", (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split("\n");
    buf = lines.pop()!;
    for (const line of lines) {
      if (!accept(line)) continue;
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        onText(line);
      }
      if (parsed) onJson(parsed);
    }
  });
}

function dropUndefined(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Starts a hub and waits until it logs "hub ready" (or fails with its output). */
export async function startHub(
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
  opts: HubLogOptions = {},
): Promise<HubProcess> {
  const h = spawnHub(env, opts);
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | string | undefined;
  void h.exited.then((c) => (exitCode = c));
  for (;;) {
    const ready = h.logs.find((l) => l.msg === "hub ready");
    if (ready) {
      return {
        ...h,
        url: String(ready.address).replace("0.0.0.0", "127.0.0.1"),
        stop: async (signal: NodeJS.Signals = "SIGTERM") => {
          if (h.proc.exitCode === null && h.proc.signalCode === null) h.proc.kill(signal);
          return h.exited;
        },
      };
    }
    if (exitCode !== undefined || Date.now() > deadline) {
      h.proc.kill("SIGKILL");
      throw new Error(
        `hub did not become ready (exit ${exitCode}):\n${h.stderr.join("")}\n${h.logs.map((l) => JSON.stringify(l)).join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
