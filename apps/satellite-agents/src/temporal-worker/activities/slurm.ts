/**
 * SLURM activities: the burn-in batch job (submitted once per job and device, under a unique
 * name), waiting for it, cancelling it, and the release check of a node.
 */
import { ApplicationFailure, Context } from "@temporalio/activity";
import { isTerminalSlurmState } from "@fm/clients";
import {
  isSlurmDrained,
  isSlurmNodeRegistered,
  slurmNodeNameOf,
  slurmNodeNeedsResume,
  slurmNodeWords,
  slurmUnavailableWords,
  type BurnInTest,
} from "@fm/domain";
import { burnInAllocationFolder, type DevicePlan } from "@fm/domain/workflows";
import { multiNodeScript, singleNodeScript } from "./burn-in-script.ts";
import { slurmOf, type ActivityDeps } from "./deps.ts";
import { badInput, guarded, notConfigured, sourceRejected } from "./failures.ts";

type SlurmDeps = Pick<ActivityDeps, "slurm" | "slurmDeviceNamePrefix" | "burnIn" | "pollIntervalMs">;
type AdoptDeps = SlurmDeps & Pick<ActivityDeps, "slurmNodes" | "slurmAdoption">;
/** One device's single-node tests (all of them when `tests` is absent: a burn-in started before tests were chosen). */
type BurnIn = {
  jobId: string;
  jobName: string;
  device: DevicePlan;
  durationMinutes: number;
  partition?: string;
  tests?: BurnInTest[];
  /**
   * The results folder (burnInDeviceFolder). Absent: asked for by a workflow that started
   * before folders were named by device id, whose course reads the folder named after the device.
   */
  folder?: string;
};
/** One multi-node test over every device of the job, in one allocation. */
type MultiNodeBurnIn = {
  jobId: string;
  jobName: string;
  devices: DevicePlan[];
  test: BurnInTest;
  durationMinutes: number;
  partition?: string;
};
type BurnInResult = { device: string; slurmJobId: number; state: string; exitCode: number | null };

export function slurmActivities(deps: AdoptDeps) {
  return {
    slurmSubmitBurnIn: (a: BurnIn) => slurmSubmitBurnIn(deps, a),
    slurmSubmitMultiNode: (a: MultiNodeBurnIn) => slurmSubmitMultiNode(deps, a),
    slurmWait: (a: { slurmJobId: number; device: string }) => slurmWait(deps, a),
    slurmCancel: (ids: number[]) => slurmCancel(deps, ids),
    slurmCheckNode: (d: DevicePlan) => slurmCheckNode(deps, d),
    slurmWaitDrain: (d: DevicePlan, drained: boolean) => slurmWaitDrain(deps, d, drained),
    slurmCheckNodesExist: (ds: DevicePlan[]) => slurmCheckNodesExist(deps, ds),
    slurmAwaitNode: (d: DevicePlan) => slurmAwaitNode(deps, d),
    slurmResumeNode: (d: DevicePlan) => slurmResumeNode(deps, d),
  };
}

/**
 * Before a REPAIR cordons anything: every device is a node SLURM knows (it could not be drained
 * otherwise), and this worker can run the re-test that gives it back (a repair that could lift
 * its cordon but not re-test would end with the devices back in service untested).
 */
async function slurmCheckNodesExist(deps: SlurmDeps, ds: DevicePlan[]): Promise<void> {
  return guarded(async () => {
    if (!deps.burnIn.outputDir)
      throw notConfigured(
        "this worker has no FM_BURNIN_OUTPUT_DIR (the folder the compute nodes and the worker share for burn-in results): a repair could not re-test the devices",
      );
    const names = ds.map((d) => nodeOf(deps, d));
    const known = new Set((await slurmOf(deps).nodes()).map((n) => n.name));
    const missing = names.filter((n) => !known.has(n));
    if (missing.length) throw badInput(`SLURM has no node ${missing.join(", ")}`);
  });
}

/** SLURM states in which a drained node still runs jobs (DRAINING): not yet free to repair. */
const BUSY = new Set(["ALLOCATED", "MIXED", "COMPLETING"]);

/**
 * Waits for the device's SLURM node to be drained with no job left running (`drained`), or
 * back out of its drain. The drain is the site's SLURM agent's (it mirrors the hub's cordon,
 * FM_CORDON_SYNC), so there is one writer of drains and their reasons; this only watches.
 */
async function slurmWaitDrain(deps: SlurmDeps, d: DevicePlan, drained: boolean): Promise<string> {
  const ctx = Context.current();
  const name = nodeOf(deps, d);
  for (;;) {
    const node = await guarded(async () => (await slurmOf(deps).nodes()).find((n) => n.name === name));
    if (!node) throw badInput(`SLURM has no node ${name}`);
    const isDrained = isSlurmDrained(node.state, node.stateFlags);
    const busy = [node.state, ...node.stateFlags].some((w) => BUSY.has((w ?? "").toUpperCase()));
    ctx.heartbeat({ state: node.state, flags: node.stateFlags });
    if (drained ? isDrained && !busy : !isDrained)
      return `${name} ${drained ? `drained${node.reason ? ` (${node.reason})` : ""}` : "back in service"}`;
    await ctx.sleep(deps.pollIntervalMs);
  }
}

/**
 * Submits the burn-in batch job of one device, pinned to its SLURM node, under a name unique to
 * this job and device; a job already submitted under that name is reused, not resubmitted.
 */
async function slurmSubmitBurnIn(deps: SlurmDeps, a: BurnIn): Promise<number> {
  const node = nodeOf(deps, a.device);
  return submitOnce(deps, {
    name: `fm-${a.jobName}-${a.device.name}`.slice(0, 200),
    nodes: [node],
    folder: a.folder ?? `${a.jobName}/${a.device.name}`,
    job: a,
    device: a.device.name,
    script: singleNodeScript({
      title: `Fleet Manager burn-in of ${a.device.name} (job ${a.jobName})`,
      tests: a.tests ?? ["hardware-tests"],
      images: deps.burnIn.images,
      command: deps.burnIn.command,
    }),
  });
}

/** Submits a multi-node test as one job over all the devices' nodes (the same reuse by name). */
async function slurmSubmitMultiNode(deps: SlurmDeps, a: MultiNodeBurnIn): Promise<number> {
  const nodes = a.devices.map((d) => nodeOf(deps, d));
  return submitOnce(deps, {
    name: `fm-${a.jobName}-${a.test}`.slice(0, 200),
    nodes,
    folder: burnInAllocationFolder(a.jobName, a.test),
    job: a,
    device: nodes.join(","),
    script: multiNodeScript({
      title: `Fleet Manager ${a.test} over ${nodes.length} nodes (job ${a.jobName})`,
      test: a.test,
      images: deps.burnIn.images,
      command: deps.burnIn.command,
    }),
  });
}

async function submitOnce(
  deps: SlurmDeps,
  s: {
    name: string;
    nodes: string[];
    folder: string;
    job: { jobId: string; jobName: string; durationMinutes: number; partition?: string };
    device: string;
    script: string;
  },
): Promise<number> {
  return guarded(async () => {
    const slurm = slurmOf(deps);
    // Results are read back from this folder: a burn-in whose results nobody could read is not started.
    const outputDir = deps.burnIn.outputDir;
    if (!outputDir)
      throw notConfigured(
        "this worker has no FM_BURNIN_OUTPUT_DIR (the folder the compute nodes and the worker share for burn-in results)",
      );
    const existing = (await slurm.jobsByName(s.name))[0];
    if (existing) return existing.jobId;
    const { jobId } = await slurm.submitJob({
      name: s.name,
      nodes: s.nodes,
      ...(s.job.partition ? { partition: s.job.partition } : {}),
      timeLimitMinutes: s.job.durationMinutes + 10,
      comment: `fleet-manager job ${s.job.jobId}`,
      workingDirectory: "/tmp",
      // Not the job's name, which holds the device's: a NetBox name is no path (`%j` is SLURM's job id).
      standardOutput: `/tmp/fm-${s.job.jobName}-%j.out`,
      environment: {
        FM_BURNIN_DURATION_S: String(s.job.durationMinutes * 60),
        FM_JOB_ID: s.job.jobId,
        FM_DEVICE: s.device,
        FM_BURNIN_OUT: `${outputDir}/${s.folder}`,
        PATH: "/usr/local/bin:/usr/bin:/bin",
      },
      script: s.script,
    });
    // Look-then-submit is two steps: should two attempts ever have raced (one Temporal
    // thought dead), the oldest job of the name wins and the others are cancelled.
    const named = await slurm.jobsByName(s.name);
    const keep = named[0]?.jobId ?? jobId;
    for (const extra of named.slice(1)) await slurm.cancelJob(extra.jobId);
    return keep;
  });
}

/** Waits for a SLURM job to end; cancelling the activity cancels the SLURM job. */
async function slurmWait(deps: SlurmDeps, a: { slurmJobId: number; device: string }): Promise<BurnInResult> {
  const ctx = Context.current();
  try {
    for (;;) {
      const job = await guarded(() => slurmOf(deps).job(a.slurmJobId));
      // slurmctld forgets ended jobs after MinJobAge (300 s by default); without accounting
      // (slurmdbd) the result is then unknown, and saying so beats waiting forever.
      if (!job)
        throw ApplicationFailure.nonRetryable(
          `SLURM no longer knows job ${a.slurmJobId} (it ended more than MinJobAge ago, while no worker watched): its result is unknown`,
          "SourceRejected",
        );
      ctx.heartbeat({ state: job.state });
      if (isTerminalSlurmState(job.state))
        return { device: a.device, slurmJobId: a.slurmJobId, state: job.state, exitCode: job.exitCode };
      await ctx.sleep(deps.pollIntervalMs);
    }
  } catch (err) {
    // Only a cancellation of the activity itself (its workflow was cancelled or is gone) ends
    // the SLURM job; a worker shutting down, a lost heartbeat, a pause or a reset leave it
    // running for the next attempt to wait on.
    const reason = ctx.cancellationSignal.aborted
      ? (ctx.cancellationSignal.reason as Error | undefined)?.message
      : undefined;
    if (reason === "CANCELLED" || reason === "NOT_FOUND")
      await slurmOf(deps)
        .cancelJob(a.slurmJobId)
        .catch(() => {});
    throw err;
  }
}

/** The device's SLURM node; a device whose name the prefix does not start has none. */
function nodeOf(deps: SlurmDeps, d: DevicePlan): string {
  const node = slurmNodeNameOf(d.name, d.slurmNodeName, deps.slurmDeviceNamePrefix);
  if (node === null)
    throw badInput(`${d.name} is no SLURM node: its name does not start with ${deps.slurmDeviceNamePrefix}`);
  return node;
}

async function slurmCancel(deps: SlurmDeps, ids: number[]): Promise<void> {
  await guarded(() => Promise.all(ids.map((id) => slurmOf(deps).cancelJob(id))));
}

/** RELEASE with SLURM: the node is known to SLURM and neither down nor drained. */
async function slurmCheckNode(deps: SlurmDeps, d: DevicePlan): Promise<string> {
  return guarded(async () => {
    const name = nodeOf(deps, d);
    const node = (await slurmOf(deps).nodes()).find((n) => n.name === name);
    if (!node) throw badInput(`SLURM has no node ${name}`);
    const bad = slurmUnavailableWords(node.state, node.stateFlags);
    if (bad.length)
      throw badInput(`SLURM node ${name} is ${bad.join("+").toLowerCase()}${node.reason ? `: ${node.reason}` : ""}`);
    return node.state;
  });
}

/**
 * SLURM adoption: waits until the new server's slurmd has registered its node with slurmctld
 * (present, neither unknown nor not responding), up to the adoption's register timeout.
 */
async function slurmAwaitNode(deps: AdoptDeps, d: DevicePlan): Promise<string> {
  const ctx = Context.current();
  const name = nodeOf(deps, d);
  const timeoutMs = deps.slurmAdoption?.registerTimeoutMs ?? 30 * 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await guarded(async () => (await slurmOf(deps).nodes()).find((n) => n.name === name));
    if (node && isSlurmNodeRegistered(node.state, node.stateFlags)) return node.state;
    ctx.heartbeat({ node: name, state: node?.state ?? null });
    if (Date.now() > deadline)
      throw sourceRejected(
        `SLURM node ${name} did not register within ${Math.round(timeoutMs / 1000)} s (${node ? `it is ${slurmNodeWords(node.state, node.stateFlags).join("+").toLowerCase()}` : "slurmctld does not know it"}): is slurmd running on the server?`,
      );
    await ctx.sleep(deps.pollIntervalMs);
  }
}

/**
 * SLURM adoption: a registered node that is down or drained is resumed, and read back until it
 * is in service. slurmctld may still mark a node that has just registered as not responding
 * until its next contact with the slurmd, so that is waited out (up to RESUME_SETTLE_MS), and a
 * node it set down again meanwhile is resumed again.
 */
async function slurmResumeNode(deps: AdoptDeps, d: DevicePlan): Promise<string> {
  const ctx = Context.current();
  const name = nodeOf(deps, d);
  const read = () =>
    guarded(async () => {
      const node = (await slurmOf(deps).nodes()).find((n) => n.name === name);
      if (!node) throw badInput(`SLURM has no node ${name}`);
      return node;
    });
  const before = await read();
  const was = slurmNodeWords(before.state, before.stateFlags).join("+").toLowerCase();
  const deadline = Date.now() + RESUME_SETTLE_MS;
  let resumed = false;
  for (let node = before; ; node = await read()) {
    const bad = slurmUnavailableWords(node.state, node.stateFlags);
    if (!bad.length) return resumed ? `${name} resumed (was ${was})` : `${name} already in service (${node.state})`;
    if (slurmNodeNeedsResume(node.state, node.stateFlags)) {
      if (!deps.slurmNodes) throw notConfigured("this worker cannot update SLURM nodes (SLURM_URL, SLURM_TOKEN_FILE)");
      const updater = deps.slurmNodes;
      await guarded(() => updater.resume(name));
      resumed = true;
    }
    if (Date.now() > deadline)
      throw sourceRejected(
        `SLURM node ${name} is still ${bad.join("+").toLowerCase()} after a resume${node.reason ? `: ${node.reason}` : ""}`,
      );
    ctx.heartbeat({ node: name, state: node.state });
    await ctx.sleep(deps.pollIntervalMs);
  }
}

/** How long a resumed node may take to read as in service. */
const RESUME_SETTLE_MS = 60_000;
