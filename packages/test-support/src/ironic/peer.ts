/**
 * A real OpenStack Ironic for tests: one `ironic` process (API and conductor together) in
 * standalone mode (docs/peers.md, "OpenStack Ironic"): no Keystone (noauth), no message bus (rpc_transport = none), SQLite in a
 * fresh temporary folder, and the `fake-hardware` hardware type, so nodes move through Ironic's
 * real provision state machine without any hardware.
 *
 * Needs the `ironic` and `ironic-dbsync` commands (Debian package ironic-common), which
 * `scripts/peers/ironic.sh install` provides; scripts/setup.sh runs it.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "../ports.ts";

const execFileAsync = promisify(execFile);

export interface IronicPeer {
  /** Base URL without the version, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** The scratch folder: ironic.conf, ironic.db, ironic.log, stdout.log. */
  dir: string;
  /** [pxe] tftp_root when started with `pxe`. */
  tftpRoot: string | undefined;
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
  /**
   * [conductor] automated_clean (default true). False where provided nodes cannot boot the agent
   * ramdisk (redfish nodes on a test BMC): their cleaning would wait for a call-back forever.
   */
  automatedClean?: boolean;
  /**
   * Nodes may PXE-boot the agent ramdisk (the `pxe` boot interface, for machines of
   * ../ipa/machine.ts): see `PxeOptions`. Off by default, so other suites keep their config.
   */
  pxe?: PxeOptions;
}

/**
 * What PXE-booting the agent ramdisk needs from this Ironic, and the agent-facing timings a
 * deploy test wants short (each only in an Ironic started with `pxe`).
 */
export interface PxeOptions {
  /**
   * [pxe] kernel_append_params: ironic-python-agent options the agent reads from its kernel
   * command line (e.g. `ipa-image-download-connection-retry-interval=0`).
   */
  kernelAppendParams?: string;
  /** [api] ramdisk_heartbeat_timeout (300 by default; the agent heartbeats every 0.3–0.6 × it). */
  ramdiskHeartbeatTimeoutS?: number;
  /**
   * [conductor] deploy_callback_timeout (1800 s by default): how long a deploy waits for the
   * agent's call-back. Provision timeouts are then checked every 2 s instead of every 60 s.
   */
  deployCallbackTimeoutS?: number;
  /**
   * A site whose nodes boot in BIOS mode ([deploy] default_boot_mode = bios; uefi otherwise), so
   * nodes the workflows enrol need no boot mode of their own.
   */
  biosByDefault?: boolean;
}

/**
 * Ironic's configuration for one scratch folder: standalone, SQLite, the `fake-hardware` type and
 * the `redfish` type (for nodes whose BMC is a test Redfish server, ../redfish.ts). A redfish
 * node gets the interfaces Ironic picks by default from these lists: redfish power, management
 * and inspection, virtual-media boot and direct deploy (which nothing here can boot, hence
 * `automatedClean: false` for tests that provide redfish nodes).
 */
export function ironicConfig(
  dir: string,
  port: number,
  o: { automatedClean?: boolean; pxe?: PxeOptions } = {},
): string {
  const automatedClean = o.automatedClean ?? true;
  const pxe = o.pxe;
  return `[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = ci-conductor
enabled_hardware_types = fake-hardware,redfish
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake,redfish-virtual-media${pxe ? ",pxe" : ""}
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake,direct
enabled_inspect_interfaces = fake,redfish,no-inspect
enabled_management_interfaces = fake,redfish
enabled_network_interfaces = noop
enabled_power_interfaces = fake,redfish
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
${pxe ? `ramdisk_heartbeat_timeout = ${pxe.ramdiskHeartbeatTimeoutS ?? 300}` : ""}

[conductor]
automated_clean = ${automatedClean}
deploy_kernel = http://127.0.0.1/fake-kernel
deploy_ramdisk = http://127.0.0.1/fake-ramdisk
heartbeat_interval = 5
sync_power_state_interval = 60
${pxe?.deployCallbackTimeoutS ? `deploy_callback_timeout = ${pxe.deployCallbackTimeoutS}\ncheck_provision_state_interval = 2` : ""}

[redfish]
# A test BMC that is down is down: fail in seconds rather than retry for 20 s (5 x 4 s by default).
connection_attempts = 2
connection_retry_interval = 1

[database]
connection = sqlite:///${dir}/ironic.db

[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1

[dhcp]
dhcp_provider = none

[oslo_concurrency]
lock_path = ${dir}/locks
${pxe ? pxeConfig(dir, port, pxe) : ""}`;
}

/**
 * The `pxe` boot interface's folders in the scratch folder (tftp_root is what the test machine's
 * firmware reads, ../ipa/machine.ts), the API URL the agent is told (ipa-api-url, from
 * [service_catalog] endpoint_override in standalone mode), deploy logs kept locally, and the
 * agent-facing waits shortened: heartbeats, the power-off poll after the agent's `poweroff`.
 */
function pxeConfig(dir: string, port: number, pxe: PxeOptions): string {
  return `
[pxe]
tftp_root = ${dir}/tftpboot
tftp_master_path = ${dir}/tftpboot/master_images
images_path = ${dir}/images
instance_master_path = ${dir}/master_images
kernel_append_params = nofb vga=normal ${pxe.kernelAppendParams ?? ""}

[service_catalog]
endpoint_override = http://127.0.0.1:${port}

[deploy]
default_boot_mode = ${pxe.biosByDefault ? "bios" : "uefi"}

[agent]
deploy_logs_local_path = ${dir}/deploy-logs
post_deploy_get_power_state_retry_interval = 1
`;
}

function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return `(${file}: not written)`;
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

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
    if (opts.pxe) await mkdir(join(dir, "tftpboot", "master_images"), { recursive: true });
    // The schema first, with a placeholder port, so that the time between choosing a free
    // port and Ironic binding it is Ironic's own startup only.
    // create_schema, not `upgrade`: Ironic's migrations fail on SQLite.
    await writeFile(conf, ironicConfig(dir, 0, opts));
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
      await writeFile(conf, ironicConfig(dir, port, opts));
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

/**
 * The environment without REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE: python-requests lets them
 * override a Session's own `verify` (psf/requests#3829), so on a machine that sets them, sushy
 * would ignore a node's redfish_verify_ca (true, false, or its CA bundle alike).
 */
function conductorEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.REQUESTS_CA_BUNDLE;
  delete env.CURL_CA_BUNDLE;
  return env;
}

/** A spawned `ironic` process, unref'd and killed when the test process exits. */
interface IronicProcess {
  proc: ChildProcess;
  pid: number;
  exited: Promise<void>;
  /** The exit code or signal, once it has exited. */
  exit(): string | undefined;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** Stop killing it when the test process exits (it has exited, or is being stopped). */
  release(): void;
}

function launch(dir: string, conf: string): IronicProcess {
  // stdout/stderr go to a file, not a pipe: nobody would drain a pipe once the test is past
  // startup, and a full pipe would block Ironic's logging and so Ironic.
  const fd = openSync(join(dir, "stdout.log"), "a");
  let proc: ChildProcess;
  try {
    proc = spawn("ironic", ["--config-file", conf], { stdio: ["ignore", fd, fd], env: conductorEnv() });
  } finally {
    closeSync(fd); // the child has its own copy
  }
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
  return {
    proc,
    pid: proc.pid!,
    exited,
    exit: () => exit,
    kill: async () => {
      proc.kill("SIGKILL");
      await exited;
    },
    release: () => process.removeListener("exit", killOnExit),
  };
}

/**
 * Resolves once this process serves `GET /v1` on `port`; otherwise kills it and rejects with the
 * tail of its logs (PortTakenError when another listener had the port).
 */
async function waitUntilServing(p: IronicProcess, dir: string, port: number, readyTimeoutMs: number): Promise<void> {
  const url = `http://127.0.0.1:${port}`;
  const ironicLog = join(dir, "ironic.log");
  const stdoutLog = join(dir, "stdout.log");
  const logs = () => `--- ${ironicLog}\n${tail(ironicLog)}\n--- ${stdoutLog}\n${tail(stdoutLog)}`;
  // eventlet.wsgi logs "(<pid>) wsgi starting up on http://127.0.0.1:<port>" once it serves.
  const servesPort = () =>
    existsSync(ironicLog) && readFileSync(ironicLog, "utf8").includes(`(${p.pid}) wsgi starting up on ${url}`);
  const deadline = Date.now() + readyTimeoutMs;
  const fail = async (why: string, ErrorClass: new (message: string) => Error = Error) => {
    const text = logs();
    await p.kill();
    p.release();
    return new ErrorClass(`Ironic (pid ${p.pid}) on port ${port} ${why}\n${text}`);
  };
  for (;;) {
    if (p.exit() !== undefined) {
      const inUse = /Address already in use|Errno 98/.test(logs());
      throw await fail(`exited (${p.exit()}) before it was ready`, inUse ? PortTakenError : Error);
    }
    if (Date.now() > deadline) throw await fail(`not ready after ${readyTimeoutMs} ms`);
    if (servesPort()) {
      const ok = await fetch(`${url}/v1`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok && p.exit() === undefined) return;
    }
    await sleep(100);
  }
}

async function spawnIronic(dir: string, conf: string, port: number, opts: StartIronicOptions): Promise<IronicPeer> {
  const p = launch(dir, conf);
  await waitUntilServing(p, dir, port, opts.readyTimeoutMs ?? 60_000);
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    tftpRoot: opts.pxe ? join(dir, "tftpboot") : undefined,
    pid: p.pid,
    stop: () =>
      (stopping ??= (async () => {
        if (p.exit() === undefined) {
          p.proc.kill("SIGTERM");
          // Ironic stops in under a second; a hung one must not hang the test run.
          const timer = setTimeout(() => p.proc.kill("SIGKILL"), 10_000);
          await p.exited;
          clearTimeout(timer);
        }
        p.release();
        if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
      })()),
  };
}
