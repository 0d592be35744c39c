/**
 * SLURM activities: the burn-in batch job (submitted once per job and device, under a unique
 * name), waiting for it, cancelling it, and the release check of a node.
 */
import { ApplicationFailure, Context } from "@temporalio/activity";
import { isTerminalSlurmState } from "@fm/clients";
import {
  isSlurmNodeRegistered,
  slurmNodeNameOf,
  slurmNodeNeedsResume,
  slurmNodeWords,
  slurmUnavailableWords,
} from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import { slurmOf, type ActivityDeps } from "./deps.ts";
import { badInput, guarded, notConfigured, sourceRejected } from "./failures.ts";

type SlurmDeps = Pick<ActivityDeps, "slurm" | "slurmDeviceNamePrefix" | "burnInCommand" | "pollIntervalMs">;
type AdoptDeps = SlurmDeps & Pick<ActivityDeps, "slurmNodes" | "slurmAdoption">;
type BurnIn = { jobId: string; jobName: string; device: DevicePlan; durationMinutes: number; partition?: string };
type BurnInResult = { device: string; slurmJobId: number; state: string; exitCode: number | null };

export function slurmActivities(deps: AdoptDeps) {
  return {
    slurmSubmitBurnIn: (a: BurnIn) => slurmSubmitBurnIn(deps, a),
    slurmWait: (a: { slurmJobId: number; device: string }) => slurmWait(deps, a),
    slurmCancel: (ids: number[]) => slurmCancel(deps, ids),
    slurmCheckNode: (d: DevicePlan) => slurmCheckNode(deps, d),
    slurmAwaitNode: (d: DevicePlan) => slurmAwaitNode(deps, d),
    slurmResumeNode: (d: DevicePlan) => slurmResumeNode(deps, d),
  };
}

/**
 * Submits the burn-in batch job pinned to the device's SLURM node, under a name unique to this
 * job and device; a job already submitted under that name is reused, not resubmitted.
 */
async function slurmSubmitBurnIn(deps: SlurmDeps, a: BurnIn): Promise<number> {
  return guarded(async () => {
    const slurm = slurmOf(deps);
    const name = `fm-${a.jobName}-${a.device.name}`.slice(0, 200);
    const existing = (await slurm.jobsByName(name))[0];
    if (existing) return existing.jobId;
    const node = nodeOf(deps, a.device);
    const { jobId } = await slurm.submitJob({
      name,
      nodes: [node],
      ...(a.partition ? { partition: a.partition } : {}),
      timeLimitMinutes: a.durationMinutes + 10,
      comment: `fleet-manager job ${a.jobId}`,
      workingDirectory: "/tmp",
      standardOutput: `/tmp/${name}-%j.out`,
      environment: {
        FM_BURNIN_DURATION_S: String(a.durationMinutes * 60),
        FM_JOB_ID: a.jobId,
        FM_DEVICE: a.device.name,
        PATH: "/usr/local/bin:/usr/bin:/bin",
      },
      script: `#!/bin/bash\n# Fleet Manager burn-in of ${a.device.name} (job ${a.jobName})\n${deps.burnInCommand}\n`,
    });
    // Look-then-submit is two steps: should two attempts ever have raced (one Temporal
    // thought dead), the oldest job of the name wins and the others are cancelled.
    const named = await slurm.jobsByName(name);
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
