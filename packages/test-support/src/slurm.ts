/**
 * A real SLURM cluster for tests (Slurm 22.05 from Debian 12): slurmctld, one slurmd per fake
 * node and slurmrestd with JWT auth, all on 127.0.0.1, started by `scripts/peers/slurm.sh start`
 * in a fresh temporary folder on free ports, so several clusters can run side by side.
 * Jobs really run (as root, on this machine) on the fake nodes.
 *
 * The helpers below use the Slurm commands (scontrol, sbatch) on purpose: they drive and observe
 * the cluster independently of the client under test (packages/clients/src/slurm-client.ts).
 *
 * Needs root and the Debian packages that `scripts/peers/slurm.sh install` provides.
 */
import { execFile, spawnSync } from "node:child_process";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.ts";
import { REPO_ROOT } from "./process.ts";

const execFileAsync = promisify(execFile);
const SCRIPT = join(REPO_ROOT, "scripts/peers/slurm.sh");

export interface SlurmPeer {
  /** slurmrestd's base URL without a version, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** The cluster's folder: etc/slurm.conf, log/*.log, run/token-root, state, spool. */
  dir: string;
  /** A JWT for user root (24 h), for X-SLURM-USER-NAME: root / X-SLURM-USER-TOKEN. */
  token: string;
  /** The fake nodes, e.g. ["gpu001", "gpu002", "gpu003", "gpu004"]; one partition named after the prefix. */
  nodes: string[];
  /** Path of slurm.conf: the Slurm commands need SLURM_CONF set to it. */
  slurmConf: string;
  /** Stops every daemon (and cancels running jobs), then removes `dir` unless `keepDir`. */
  stop(): Promise<void>;
}

export interface StartSlurmOptions {
  /** Number of fake nodes (default 4). */
  nodes?: number;
  /** Node name prefix (default "gpu": gpu001, gpu002, ...). Also the partition's name. */
  nodePrefix?: string;
  /**
   * The last n nodes are configured but their slurmd does not start (default 0): nodes still to
   * come, as SLURM adoption's servers are until they boot. startNodeDaemon() starts one.
   */
  standbyNodes?: number;
  /** Keep the folder after stop(), to read the logs. */
  keepDir?: boolean;
  /** Seconds the script waits for each daemon (default 60). */
  startTimeoutS?: number;
}

/** Whether nothing listens on any of `count` ports from `first` (we can bind each ourselves). */
async function portsFree(first: number, count: number): Promise<boolean> {
  for (let port = first; port < first + count; port++) {
    if (port > 65535) return false;
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(false));
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (!ok) return false;
  }
  return true;
}

/** A base such that base+1 .. base+count are free right now (slurmd ports are consecutive). */
async function freePortRange(count: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const first = await freePort();
    if (await portsFree(first, count)) return first - 1;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

function checkPrerequisites(): void {
  if (process.getuid?.() !== 0)
    throw new Error("startSlurm needs root: slurmd runs the jobs as their users, munged and slurmctld run as root");
  if (spawnSync("sh", ["-c", "command -v slurmctld && command -v slurmrestd && command -v munged"]).status !== 0) {
    throw new Error("SLURM is not installed: run scripts/peers/slurm.sh install");
  }
}

/**
 * Starts a cluster and resolves once every node is idle and slurmrestd answers (about 1 s
 * here). Note that slurmctld's scheduler makes its first pass ~3 s after it starts: jobs
 * submitted right away stay PENDING until then. Rejects with the script's output (which
 * carries the daemons' log tails) on failure; a port taken between choosing and binding is
 * retried with other ports.
 */
export async function startSlurm(opts: StartSlurmOptions = {}): Promise<SlurmPeer> {
  checkPrerequisites();
  const nodeCount = opts.nodes ?? 4;
  const prefix = opts.nodePrefix ?? "gpu";
  const dir = await mkdtemp(join(tmpdir(), "slurm-"));
  const run = (cmd: "start" | "stop", env: Record<string, string> = {}) =>
    execFileAsync(SCRIPT, [cmd, dir], {
      env: { ...process.env, ...env },
      timeout: ((opts.startTimeoutS ?? 60) * 4 + 30) * 1000,
    });
  try {
    for (let attempt = 1; ; attempt++) {
      const restPort = await freePort();
      const ctldPort = await freePort();
      const slurmdBase = await freePortRange(nodeCount);
      const env = {
        SLURM_REST_PORT: String(restPort),
        SLURM_CTLD_PORT: String(ctldPort),
        SLURMD_PORT_BASE: String(slurmdBase),
        SLURM_NODES: String(nodeCount),
        SLURM_NODE_PREFIX: prefix,
        SLURM_STANDBY_NODES: String(opts.standbyNodes ?? 0),
        SLURM_START_TIMEOUT: String(opts.startTimeoutS ?? 60),
      };
      try {
        await run("start", env);
      } catch (err) {
        const e = err as { stderr?: string; stdout?: string; message: string };
        const output = `${e.stdout ?? ""}${e.stderr ?? ""}`;
        if (attempt < 3 && /already in use|Address already in use/.test(output)) continue;
        throw new Error(`scripts/peers/slurm.sh start ${dir} failed: ${e.message}\n${output}`);
      }
      const slurmConf = join(dir, "etc/slurm.conf");
      const token = (await readFile(join(dir, "run/token-root"), "utf8")).trim();
      const nodes = Array.from({ length: nodeCount }, (_, i) => `${prefix}${String(i + 1).padStart(3, "0")}`);
      let stopping: Promise<void> | undefined;
      return {
        url: `http://127.0.0.1:${restPort}`,
        port: restPort,
        dir,
        token,
        nodes,
        slurmConf,
        stop: () =>
          (stopping ??= (async () => {
            await run("stop");
            if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
          })()),
      };
    }
  } catch (err) {
    await run("stop").catch(() => {});
    if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Slurm command helpers (independent of the REST client).

/** Runs a Slurm command (scontrol, sbatch, squeue, scancel, sinfo) against the peer's cluster. */
export async function slurmCommand(
  peer: Pick<SlurmPeer, "slurmConf">,
  command: string,
  args: string[],
): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, {
      env: { ...process.env, SLURM_CONF: peer.slurmConf },
      timeout: 30_000,
    });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** A job as `scontrol -o show job` describes it (22.05 has no --json). */
export interface ScontrolJob {
  jobId: number;
  name: string;
  /** e.g. PENDING RUNNING COMPLETING COMPLETED FAILED CANCELLED TIMEOUT */
  state: string;
  reason: string;
  /** "<exit status>:<signal>", e.g. "3:0"; "0:15" for a job killed by SIGTERM. */
  exitCode: string;
  /** Allocated nodes as a hostlist expression ("gpu002", "gpu[001-002]"); "" while pending. */
  nodeList: string;
  comment: string | null;
  /** Every key=value of the line, as printed. */
  fields: Record<string, string>;
}

/** `scontrol -o show job <id>`, parsed; null when the controller does not know the job. */
export async function scontrolJob(peer: Pick<SlurmPeer, "slurmConf">, jobId: number): Promise<ScontrolJob | null> {
  let out: string;
  try {
    out = await slurmCommand(peer, "scontrol", ["-o", "show", "job", String(jobId)]);
  } catch (err) {
    if (/Invalid job id specified/.test((err as Error).message)) return null;
    throw err;
  }
  const fields: Record<string, string> = {};
  // Values have no spaces except the last fields (Command=, WorkDir= paths with spaces are
  // not used here); Comment= may, so it is read to the next " Key=".
  for (const m of out.trim().matchAll(/(?:^|\s)([A-Za-z][\w/:]*)=(.*?)(?=\s[A-Za-z][\w/:]*=|$)/g))
    fields[m[1]!] = m[2]!;
  const nullable = (v: string | undefined) => (v === undefined || v === "(null)" ? null : v);
  return {
    jobId: Number(fields.JobId),
    name: fields.JobName ?? "",
    state: fields.JobState ?? "",
    reason: fields.Reason ?? "",
    exitCode: fields.ExitCode ?? "",
    nodeList: fields.NodeList === "(null)" ? "" : (fields.NodeList ?? ""),
    comment: nullable(fields.Comment),
    fields,
  };
}

const TERMINAL = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
  "OUT_OF_MEMORY",
]);

/** Polls scontrol until the job reaches one of `states` (default: any final state). */
export async function waitForScontrolJob(
  peer: Pick<SlurmPeer, "slurmConf">,
  jobId: number,
  states?: readonly string[],
  timeoutMs = 60_000,
): Promise<ScontrolJob> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await scontrolJob(peer, jobId);
    if (job && (states ? states.includes(job.state) : TERMINAL.has(job.state))) return job;
    if (Date.now() > deadline)
      throw new Error(
        `job ${jobId} not ${states?.join("/") ?? "finished"} after ${timeoutMs} ms: ${job ? `${job.state} (${job.reason})` : "unknown to slurmctld"}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Submits a batch script with sbatch (as root), output to /dev/null; returns the job id. */
export async function sbatch(
  peer: Pick<SlurmPeer, "slurmConf" | "dir">,
  opts: { script: string; name?: string; nodes?: string[] },
): Promise<number> {
  const args = ["--parsable", "-o", "/dev/null", "-D", peer.dir];
  if (opts.name) args.push("-J", opts.name);
  if (opts.nodes?.length) args.push("-w", opts.nodes.join(","), "-N", String(opts.nodes.length));
  // sbatch reads the script from stdin when no file is given.
  const out = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      "sbatch",
      args,
      { env: { ...process.env, SLURM_CONF: peer.slurmConf }, timeout: 30_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`sbatch failed: ${stderr.trim() || err.message}`)) : resolve(stdout),
    );
    child.stdin!.end(opts.script);
  });
  const id = Number(out.trim().split(";")[0]);
  if (!Number.isInteger(id)) throw new Error(`sbatch printed no job id: ${out}`);
  return id;
}

/** `scontrol update nodename=<node> state=<state> [reason=...]`, e.g. drain / resume. */
export async function setNodeState(
  peer: Pick<SlurmPeer, "slurmConf">,
  node: string,
  state: "drain" | "resume" | "down" | "idle",
  reason?: string,
): Promise<void> {
  await slurmCommand(peer, "scontrol", [
    "update",
    `nodename=${node}`,
    `state=${state}`,
    ...(reason ? [`reason=${reason}`] : []),
  ]);
}

/**
 * Starts the slurmd of a standby node (StartSlurmOptions.standbyNodes), as a booted server's
 * cloud-init would: it registers the node with slurmctld. Stopping the cluster stops it too.
 */
export async function startNodeDaemon(peer: Pick<SlurmPeer, "slurmConf">, node: string): Promise<void> {
  await slurmCommand(peer, "slurmd", ["-f", peer.slurmConf, "-N", node]);
}

/** A node as `scontrol -o show node` describes it: its State (e.g. IDLE, IDLE+DRAIN, DOWN*) and Reason. */
export async function scontrolNode(
  peer: Pick<SlurmPeer, "slurmConf">,
  node: string,
): Promise<{ state: string; reason: string | null }> {
  const out = await slurmCommand(peer, "scontrol", ["-o", "show", "node", node]);
  const state = /(?:^|\s)State=(\S+)/.exec(out)?.[1] ?? "";
  const reason = /(?:^|\s)Reason=(.*?)(?=\s[A-Za-z]+=|$)/.exec(out.trim())?.[1] ?? null;
  return { state, reason: reason === "(null)" ? null : reason };
}
