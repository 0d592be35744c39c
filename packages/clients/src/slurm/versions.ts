/**
 * The slurmrestd API versions, as verified against slurmrestd 22.05.8 (openapi/v0.0.38) and its
 * own schema at GET /openapi/v3, and turned into one shape (types.ts):
 * - v0.0.38 submit: {script, job: {name, environment: {K: V} (required), nodelist: "a,b",
 *   current_working_directory, ...}}. `nodelist` is not in the published schema but is
 *   accepted (sbatch -w); `required_nodes` is refused there. v0.0.39+ take environment as
 *   ["K=V"] and required_nodes as a list; v0.0.40+ take time_limit as {set, number}.
 * - Job: job_state is a string in v0.0.38 ("COMPLETED"; a job whose processes are still being
 *   cleaned up reads "COMPLETING") and a list in v0.0.40+ (["FAILED", "COMPLETING"]); exit_code
 *   is the raw wait status in v0.0.38 (exit 3 -> 768, SIGTERM -> 15) and
 *   {status, return_code, signal} in v0.0.40+; times are epoch seconds or {set, number}.
 * - Node: v0.0.38 has `state` a lower-case string ("idle") and `state_flags` (["DRAIN"]); v0.0.40+
 *   has `state` an upper-case list, base state first (["IDLE", "DRAIN"]), and no `state_flags`;
 *   `partitions` a list in both. Node update (drain, resume) is `POST /slurm/v0.0.4x/node/{name}`
 *   with an `update_node_msg` {state: ["DRAIN"], reason} or {state: ["UNDRAIN"]} from v0.0.40 on; 22.05's v0.0.38 has no
 *   such route (405). Sources, SchedMD's OpenAPI documents as slurmrestd generates them:
 *   v0.0.40 from Slurm 25.05.0 (jontk/slurm-client openapi-specs/slurm-v0.0.40.json), v0.0.41 from
 *   24.05.8 and v0.0.43 from 25.05.8 (SlinkyProject/slurm-client api/v004x/slurm-openapi.gen.json):
 *   schemas `v0.0.4x_node` (state: array of node states, reason: string, partitions:
 *   csv_string = array of strings) and `v0.0.4x_update_node_msg` (state: array, reason: string).
 */
import { z } from "zod";
import { expandHostlist } from "./hostlist.ts";
import { isTerminalSlurmState, type SlurmJob, type SlurmJobSpec, type SlurmNode, type SlurmPing } from "./types.ts";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export const RawNodeSchema = z.looseObject({
  name: z.string(),
  state: z.union([z.string(), z.array(z.string())]),
  state_flags: z.array(z.string()).optional(),
  reason: z.string().nullable().optional(),
  partitions: z.array(z.string()).nullable().optional(),
});

export const RawJobSchema = z.looseObject({
  job_id: z.number().int(),
  name: z.string().nullable().optional(),
  job_state: z.union([z.string(), z.array(z.string())]),
  state_reason: z.string().nullable().optional(),
  exit_code: z.unknown().optional(),
  nodes: z.string().nullable().optional(),
  partition: z.string().nullable().optional(),
  submit_time: z.unknown().optional(),
  start_time: z.unknown().optional(),
  end_time: z.unknown().optional(),
  comment: z.string().nullable().optional(),
});

/** The submit body for `apiVersion` ("v0.0.38"). */
export function submitBody(apiVersion: string, spec: SlurmJobSpec): unknown {
  const modern = compareVersions(apiVersion, "v0.0.39") >= 0;
  const timeAsObject = compareVersions(apiVersion, "v0.0.40") >= 0;
  const env: Record<string, string> = { PATH: DEFAULT_PATH, ...spec.environment };
  const job: Record<string, unknown> = {
    name: spec.name,
    current_working_directory: spec.workingDirectory ?? "/tmp",
    environment: modern ? Object.entries(env).map(([k, v]) => `${k}=${v}`) : env,
  };
  if (spec.nodes?.length) {
    if (modern) job.required_nodes = spec.nodes;
    else job.nodelist = spec.nodes.join(",");
  }
  if (spec.partition !== undefined) job.partition = spec.partition;
  if (spec.timeLimitMinutes !== undefined)
    job.time_limit = timeAsObject
      ? { set: true, infinite: false, number: spec.timeLimitMinutes }
      : spec.timeLimitMinutes;
  if (spec.comment !== undefined) job.comment = spec.comment;
  if (spec.standardOutput !== undefined) job.standard_output = spec.standardOutput;
  if (spec.standardError !== undefined) job.standard_error = spec.standardError;
  return { script: spec.script, job };
}

/** The controllers and release from a /ping answer (v0.0.38 says `ping`, v0.0.40+ `pinged`). */
export function normalisePing(body: { pings: unknown[]; meta?: unknown }): SlurmPing {
  const controllers = body.pings.map((raw) => {
    const p = (raw ?? {}) as { hostname?: unknown; ping?: unknown; pinged?: unknown; mode?: unknown };
    const answer = p.ping ?? p.pinged;
    return {
      hostname: String(p.hostname ?? ""),
      up: answer === "UP",
      mode: typeof p.mode === "string" ? p.mode : null,
    };
  });
  const meta = body.meta as { Slurm?: { release?: unknown }; slurm?: { release?: unknown } } | undefined;
  const release = meta?.Slurm?.release ?? meta?.slurm?.release;
  return { controllers, slurmVersion: typeof release === "string" ? release : null };
}

/** A node: the base state (lower case) and its flags, from a v0.0.38 string or a v0.0.40+ list. */
export function normaliseNode(n: z.infer<typeof RawNodeSchema>): SlurmNode {
  const states = Array.isArray(n.state) ? n.state : [n.state];
  const flags = [...states.slice(1), ...(n.state_flags ?? [])].map((f) => f.toUpperCase());
  return {
    name: n.name,
    state: (states[0] ?? "unknown").toLowerCase(),
    stateFlags: [...new Set(flags)],
    reason: n.reason || null,
    partitions: n.partitions ?? [],
  };
}

/** Whether slurmrestd's API `apiVersion` can update a node (drain, resume): v0.0.40 and later. */
export function canUpdateNode(apiVersion: string): boolean {
  return compareVersions(apiVersion, "v0.0.40") >= 0;
}

/**
 * What a node update sets: drained with a reason, undrained, or resumed. UNDRAIN clears the drain
 * and nothing else (scontrol(1)): a node SLURM itself has set DOWN stays down, where RESUME
 * returns it to service (what SLURM adoption wants of a node that just registered).
 */
export type SlurmNodeUpdate = { state: "DRAIN"; reason: string } | { state: "UNDRAIN" } | { state: "RESUME" };

/** The `update_node_msg` body of `POST /node/{name}` (v0.0.40+). */
export function updateNodeBody(update: SlurmNodeUpdate): unknown {
  return update.state === "DRAIN" ? { state: ["DRAIN"], reason: update.reason } : { state: [update.state] };
}

/** "v0.0.40" vs "v0.0.39": -1, 0, 1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.slice(1).split(".").map(Number);
  const pb = b.slice(1).split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** A number from v0.0.38's plain integer or v0.0.40+'s {set, infinite, number}; null when unset. */
function noVal(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (v && typeof v === "object") {
    const o = v as { set?: unknown; infinite?: unknown; number?: unknown };
    if (o.set === false || o.infinite === true || typeof o.number !== "number") return null;
    return o.number;
  }
  return null;
}

const epoch = (v: unknown): Date | null => {
  const s = noVal(v);
  return s !== null && s > 0 ? new Date(s * 1000) : null;
};

/** {exitCode, signal} from v0.0.38's raw wait status or v0.0.40+'s {status, return_code, signal}. */
function exitStatus(raw: unknown): { exitCode: number | null; signal: number | null } {
  if (typeof raw === "number") {
    const signal = raw & 0x7f;
    return signal ? { exitCode: null, signal } : { exitCode: (raw >> 8) & 0xff, signal: null };
  }
  if (raw && typeof raw === "object") {
    const o = raw as { status?: unknown; return_code?: unknown; signal?: { id?: unknown } };
    const status = Array.isArray(o.status) ? o.status : [o.status];
    const signal = noVal(o.signal?.id);
    if (status.includes("SIGNALED") || (signal !== null && signal > 0)) return { exitCode: null, signal };
    return { exitCode: noVal(o.return_code), signal: null };
  }
  return { exitCode: null, signal: null };
}

export function normaliseJob(j: z.infer<typeof RawJobSchema>): SlurmJob {
  const states = (Array.isArray(j.job_state) ? j.job_state : [j.job_state]).map((s) => s.toUpperCase());
  const state = states[0] ?? "UNKNOWN";
  const ended = isTerminalSlurmState(state);
  const { exitCode, signal } = ended ? exitStatus(j.exit_code) : { exitCode: null, signal: null };
  return {
    jobId: j.job_id,
    name: j.name ?? "",
    state,
    stateFlags: states.slice(1),
    stateReason: j.state_reason || null,
    exitCode,
    signal,
    nodes: j.nodes ? expandHostlist(j.nodes) : [],
    partition: j.partition || null,
    submitTime: epoch(j.submit_time),
    startTime: state === "PENDING" ? null : epoch(j.start_time),
    endTime: ended ? epoch(j.end_time) : null,
    comment: j.comment || null,
  };
}
