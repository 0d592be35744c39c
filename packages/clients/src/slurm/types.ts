/** What the SLURM client takes and returns, the same whatever the slurmrestd API version. */

/** Base job states (job_state), plus the transient ones 22.05 reports instead of the base. */
export type SlurmJobState =
  | "PENDING"
  | "RUNNING"
  | "SUSPENDED"
  | "COMPLETING"
  | "CONFIGURING"
  | "REQUEUED"
  | "COMPLETED"
  | "FAILED"
  | "CANCELLED"
  | "TIMEOUT"
  | "NODE_FAIL"
  | "PREEMPTED"
  | "BOOT_FAIL"
  | "DEADLINE"
  | "OUT_OF_MEMORY"
  | (string & {});

const TERMINAL_STATES: ReadonlySet<string> = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
  "OUT_OF_MEMORY",
  "REVOKED",
  "SPECIAL_EXIT",
]);

/** Whether a job in this state has ended for good (its exit code is known). */
export function isTerminalSlurmState(state: string): boolean {
  return TERMINAL_STATES.has(state.toUpperCase());
}

export interface SlurmNode {
  name: string;
  /** Base state, lower case: idle, allocated, mixed, down, future, unknown. */
  state: string;
  /** Upper case, e.g. ["DRAIN"] for a draining node. */
  stateFlags: string[];
  /** Why the node is drained or down; null when none. */
  reason: string | null;
  partitions: string[];
}

export interface SlurmJob {
  jobId: number;
  name: string;
  state: SlurmJobState;
  /** Further state flags (v0.0.40+ lists them beside the base state; v0.0.38 has none). */
  stateFlags: string[];
  /** e.g. "None", "Resources", "NonZeroExitCode"; null when empty. */
  stateReason: string | null;
  /** The script's exit status once the job has ended normally; null while it runs or when it was killed by a signal. */
  exitCode: number | null;
  /** The signal that ended the job (e.g. 15 for a cancelled one); null otherwise. */
  signal: number | null;
  /** Allocated nodes, expanded ("gpu[001-002]" -> ["gpu001", "gpu002"]); empty while pending. */
  nodes: string[];
  partition: string | null;
  submitTime: Date | null;
  /** When it started; null while pending. */
  startTime: Date | null;
  /** When it ended; null until it has. */
  endTime: Date | null;
  comment: string | null;
}

export interface SlurmJobSpec {
  /** Job name; unique names let a caller find a job it may already have submitted (jobsByName). */
  name: string;
  /** The batch script, starting with #!. */
  script: string;
  /** Run on exactly these nodes. */
  nodes?: string[];
  partition?: string;
  timeLimitMinutes?: number;
  /** Default /tmp (slurmrestd would otherwise use its own working directory). */
  workingDirectory?: string;
  /** Added to PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin (a job needs an environment). */
  environment?: Record<string, string>;
  comment?: string;
  /** Defaults to <workingDirectory>/slurm-<jobid>.out, as sbatch. */
  standardOutput?: string;
  standardError?: string;
}

export interface SlurmPing {
  controllers: { hostname: string; up: boolean; mode: string | null }[];
  /** e.g. "22.05.8" */
  slurmVersion: string | null;
}

export type SlurmCancelOutcome =
  /** The job was pending or running and has been told to stop (it ends CANCELLED shortly). */
  | "cancelled"
  /** It had already ended; nothing was sent. */
  | "already-finished"
  /** slurmctld does not know the id (never existed, or finished longer ago than MinJobAge). */
  | "not-found";

export interface SlurmCancelResult {
  outcome: SlurmCancelOutcome;
  /** The state the job was in when asked (null when not found). */
  state: string | null;
}
