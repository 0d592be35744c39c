/**
 * A real OpenStack Ironic for tests: one `ironic` process (API and conductor together) in
 * standalone mode (docs/peers.md, "OpenStack Ironic"): no Keystone (noauth), no message bus
 * (rpc_transport = none), SQLite in a fresh temporary folder, and the `fake-hardware` hardware
 * type, so nodes move through Ironic's real provision state machine without any hardware.
 *
 * The helpers below talk raw HTTP on purpose: they drive the peer into the states a test needs
 * and must not depend on the client under test (packages/clients/src/ironic-client.ts).
 *
 * Needs the `ironic` and `ironic-dbsync` commands (Debian package ironic-common), which
 * `scripts/peers/ironic.sh install` provides; scripts/setup.sh runs it.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { freePort } from "./ports.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Ironic 21.4 (Debian 12) tops out at 1.82. Without the header the API behaves as 1.1. */
export const IRONIC_API_VERSION = "1.82";

export interface IronicPeer {
  /** Base URL without the version, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** The scratch folder: ironic.conf, ironic.db, ironic.log, stdout.log. */
  dir: string;
  pid: number;
  /** SIGTERM, wait for the exit (SIGKILL after 10 s), then remove `dir` unless `keepDir`. */
  stop(): Promise<void>;
}

export interface StartIronicOptions {
  /** Listen here (it must be unused); by default a free port is chosen. */
  port?: number;
  /** Keep the scratch folder after stop(), to read the logs. */
  keepDir?: boolean;
  /** How long to wait for `GET /v1` to answer. */
  readyTimeoutMs?: number;
}

/** Ironic's configuration for one scratch folder (its key settings are explained in docs/peers.md). */
export function ironicConfig(dir: string, port: number): string {
  return `[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = ci-conductor
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor
default_network_interface = noop
debug = false
log_dir = ${dir}
log_file = ironic.log
state_path = ${dir}
tempdir = ${dir}

[api]
host_ip = 127.0.0.1
port = ${port}
api_workers = 1

[conductor]
automated_clean = true
deploy_kernel = http://127.0.0.1/fake-kernel
deploy_ramdisk = http://127.0.0.1/fake-ramdisk
heartbeat_interval = 5
sync_power_state_interval = 60

[database]
connection = sqlite:///${dir}/ironic.db

[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1

[dhcp]
dhcp_provider = none

[oslo_concurrency]
lock_path = ${dir}/locks
`;
}

function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return `(${file}: not written)`;
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts Ironic in a fresh temporary folder and resolves once it serves `GET /v1` (about 3 to
 * 6 s on this machine: ~2 s of `ironic-dbsync create_schema`, then 1 to 4 s for the API).
 * Rejects with the tail of Ironic's logs if it exits or is not ready within `readyTimeoutMs`.
 *
 * Ironic's API socket is opened with SO_REUSEPORT (eventlet.listen's default), so a second
 * Ironic on a port already served by one does not fail: both listen and the kernel spreads
 * connections over them. Hence the port is checked to be unused right before the spawn, and
 * readiness requires Ironic's log line saying that *this* process (by pid) serves the port,
 * not merely an answer on it.
 */
export async function startIronic(opts: StartIronicOptions = {}): Promise<IronicPeer> {
  for (const cmd of ["ironic", "ironic-dbsync"]) {
    if (spawnSync("sh", ["-c", `command -v ${cmd}`]).status !== 0) {
      throw new Error(`\`${cmd}\` is not on PATH: run scripts/peers/ironic.sh install (Debian package ironic-common)`);
    }
  }
  const dir = await mkdtemp(join(tmpdir(), "ironic-"));
  const conf = join(dir, "ironic.conf");
  try {
    await mkdir(join(dir, "locks"));
    // The schema first, with a placeholder port, so that the time between choosing a free
    // port and Ironic binding it is Ironic's own startup only.
    // create_schema, not `upgrade`: the migrations fail on SQLite (docs/peers.md).
    await writeFile(conf, ironicConfig(dir, 0));
    // Asynchronously: it takes ~2 s, during which the test process has other things to serve.
    await execFileAsync("ironic-dbsync", ["--config-file", conf, "create_schema"], { timeout: 120_000 }).catch(
      (err: { code?: unknown; signal?: unknown; stderr?: string; stdout?: string }) => {
        throw new Error(
          `ironic-dbsync create_schema failed (${String(err.code ?? err.signal)}):\n${err.stderr ?? ""}\n${err.stdout ?? ""}`,
        );
      },
    );

    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort());
      if (await listening(port)) {
        // Taken since freePort() chose it (or asked for while in use).
        if (opts.port !== undefined || attempt >= 3)
          throw new Error(`cannot start Ironic on port ${port}: something already listens there`);
        continue;
      }
      await writeFile(conf, ironicConfig(dir, port));
      try {
        return await spawnIronic(dir, conf, port, opts);
      } catch (err) {
        // Another (non-SO_REUSEPORT) listener took the port in between: choose again.
        if (!(err instanceof PortTakenError) || opts.port !== undefined || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

class PortTakenError extends Error {}

async function spawnIronic(dir: string, conf: string, port: number, opts: StartIronicOptions): Promise<IronicPeer> {
  // stdout/stderr go to a file, not a pipe: nobody would drain a pipe once the test is past
  // startup, and a full pipe would block Ironic's logging and so Ironic.
  const stdoutLog = join(dir, "stdout.log");
  const ironicLog = join(dir, "ironic.log");
  const fd = openSync(stdoutLog, "a");
  let proc: ChildProcess;
  try {
    proc = spawn("ironic", ["--config-file", conf], { stdio: ["ignore", fd, fd] });
  } finally {
    closeSync(fd); // the child has its own copy
  }
  const pid = proc.pid!;
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) =>
    proc.once("exit", (code, signal) => {
      exit = signal ?? String(code);
      resolve();
    }),
  );
  // A peer the test forgets to stop must not keep the test process alive, nor outlive it:
  // unref it, and kill it when the process exits ("exit" handlers must be synchronous; kill is).
  proc.unref();
  const killOnExit = () => proc.kill("SIGKILL");
  process.once("exit", killOnExit);

  const url = `http://127.0.0.1:${port}`;
  const logs = () => `--- ${ironicLog}\n${tail(ironicLog)}\n--- ${stdoutLog}\n${tail(stdoutLog)}`;
  // eventlet.wsgi logs "(<pid>) wsgi starting up on http://127.0.0.1:<port>" once it serves.
  const servesPort = () =>
    existsSync(ironicLog) && readFileSync(ironicLog, "utf8").includes(`(${pid}) wsgi starting up on ${url}`);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeoutMs;
  const fail = async (why: string, ErrorClass: new (message: string) => Error = Error) => {
    const text = logs();
    proc.kill("SIGKILL");
    await exited;
    process.removeListener("exit", killOnExit);
    return new ErrorClass(`Ironic (pid ${pid}) on port ${port} ${why}\n${text}`);
  };
  for (;;) {
    if (exit !== undefined) {
      const inUse = /Address already in use|Errno 98/.test(logs());
      throw await fail(`exited (${exit}) before it was ready`, inUse ? PortTakenError : Error);
    }
    if (Date.now() > deadline) throw await fail(`not ready after ${readyTimeoutMs} ms`);
    if (servesPort()) {
      const ok = await fetch(`${url}/v1`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok && exit === undefined) break;
    }
    await sleep(100);
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    dir,
    pid,
    stop: () =>
      (stopping ??= (async () => {
        if (exit === undefined) {
          proc.kill("SIGTERM");
          // Ironic stops in under a second; a hung one must not hang the test run.
          const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(timer);
        }
        process.removeListener("exit", killOnExit);
        if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
      })()),
  };
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP helpers for end-to-end tests.

/** The fields tests look at; a node carries many more (the API's full node representation). */
export interface RawIronicNode {
  uuid: string;
  name: string | null;
  provision_state: string;
  target_provision_state: string | null;
  power_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  last_error: string | null;
  fault: string | null;
  properties: Record<string, unknown>;
  [field: string]: unknown;
}

/** One request; throws with the status and the response text on anything but 2xx. */
export async function ironicRequest(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      "x-openstack-ironic-api-version": IRONIC_API_VERSION,
      accept: "application/json",
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Ironic ${method} ${path} -> ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const nodePath = (uuid: string) => `/v1/nodes/${encodeURIComponent(uuid)}`;

/** Creates a `fake-hardware` node; it starts in `enroll`. */
export async function createNode(
  url: string,
  node: { name: string; properties?: Record<string, unknown>; extra?: Record<string, unknown> },
): Promise<RawIronicNode> {
  return (await ironicRequest(url, "POST", "/v1/nodes", { driver: "fake-hardware", ...node })) as RawIronicNode;
}

export async function getNode(url: string, uuid: string): Promise<RawIronicNode> {
  return (await ironicRequest(url, "GET", nodePath(uuid))) as RawIronicNode;
}

export async function deleteNode(url: string, uuid: string): Promise<void> {
  await ironicRequest(url, "DELETE", nodePath(uuid));
}

/**
 * Asks for a provision state change (`manage`, `provide`, `active`, `deleted`, `clean`, ...;
 * `extra` carries e.g. `clean_steps`). Ironic answers 202 and the conductor moves the node
 * asynchronously: follow with waitForProvisionState. An invalid transition is a 400.
 */
export async function setProvisionState(
  url: string,
  uuid: string,
  target: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await ironicRequest(url, "PUT", `${nodePath(uuid)}/states/provision`, { target, ...extra });
}

/**
 * Polls until the node's provision_state is `state`. Fails early (with last_error) if the node
 * lands in a failure state other than the one awaited, since it would never get there then.
 */
export async function waitForProvisionState(
  url: string,
  uuid: string,
  state: string,
  timeoutMs = 30_000,
): Promise<RawIronicNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await getNode(url, uuid);
    if (node.provision_state === state) return node;
    if (node.provision_state.endsWith(" failed") || node.provision_state === "error") {
      throw new Error(
        `node ${uuid} went to "${node.provision_state}" while waiting for "${state}": ${node.last_error}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `node ${uuid} not "${state}" after ${timeoutMs} ms: "${node.provision_state}" (target ${node.target_provision_state}), last_error ${node.last_error}`,
      );
    }
    await sleep(100);
  }
}

export async function setMaintenance(url: string, uuid: string, reason: string): Promise<void> {
  await ironicRequest(url, "PUT", `${nodePath(uuid)}/maintenance`, { reason });
}

export async function clearMaintenance(url: string, uuid: string): Promise<void> {
  await ironicRequest(url, "DELETE", `${nodePath(uuid)}/maintenance`);
}

/**
 * A manual clean step that fake-hardware accepts but that fails while it runs: the fake BIOS
 * interface's apply_configuration reads `name` from every setting, so a setting without one
 * raises (KeyError 'name') inside the step.
 *
 * Why this one: Ironic 21.4 puts a node into maintenance on a clean failure only when a step
 * was executing (conductor/utils.py cleaning_error_handler: set_maintenance =
 * bool(node.clean_step)). A step the node does not have (e.g. deploy.erase_devices_metadata,
 * which only the agent deploy interface offers) or unexpected arguments to a real step (e.g.
 * bios.factory_reset with {"bogus": 1}) are rejected while the steps are validated, before any
 * runs: the node still goes to `clean failed` with last_error set, but maintenance stays false.
 */
export const FAILING_CLEAN_STEP = {
  interface: "bios",
  step: "apply_configuration",
  args: { settings: [{ bogus: 1 }] },
} as const;

/**
 * Drives a `manageable` node into `clean failed` with maintenance true, fault "clean failure"
 * and last_error and maintenance_reason set (the failed step and the error).
 */
export async function failClean(url: string, uuid: string, timeoutMs = 30_000): Promise<RawIronicNode> {
  await setProvisionState(url, uuid, "clean", { clean_steps: [FAILING_CLEAN_STEP] });
  const node = await waitForProvisionState(url, uuid, "clean failed", timeoutMs);
  if (!node.maintenance || !node.last_error) {
    throw new Error(
      `node ${uuid} is "clean failed" but not as expected (maintenance ${node.maintenance}, last_error ${node.last_error})`,
    );
  }
  return node;
}

/**
 * Creates one node per name with at most `concurrency` requests in flight; returns them in
 * the order of `names`. Stops handing out work at the first failure and rejects with it.
 *
 * Ironic is one eventlet process writing to SQLite, so it is CPU-bound and concurrency buys
 * little. Measured on this 2-core machine (Ironic 21.4.4, 2,000 nodes into a fresh database):
 * concurrency 1: 48 s; 8: 35-44 s (46-57 nodes/s); 16: 31 s (64 nodes/s).
 */
export async function createNodesBulk(
  url: string,
  names: readonly string[],
  concurrency = 8,
  properties: Record<string, unknown> = {},
): Promise<RawIronicNode[]> {
  const created: RawIronicNode[] = new Array(names.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < names.length) {
      const i = next++;
      try {
        created[i] = await createNode(url, { name: names[i]!, properties });
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, names.length)) }, worker));
  return created;
}
