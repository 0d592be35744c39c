/**
 * SLURM's node words and node names, once: what the hub's state rules, the discrepancy rules,
 * the SLURM agent's cordon mirror and the worker's release check read of a node.
 *
 * A node's base state and its flags both count (slurmrestd v0.0.40+ reports `["IDLE","DRAIN"]`
 * where older versions said `DRAINED`), so every check reads them as one upper-case set.
 */
import { z } from "zod";

/** Drained or draining, by anyone. */
export const SLURM_DRAIN_WORDS: readonly string[] = ["DRAIN", "DRAINED", "DRAINING"];
/** SLURM has failed the node. */
export const SLURM_FAILED: readonly string[] = ["FAIL"];
/** Out of service for a reason other than SLURM failing it. */
export const SLURM_IMPAIRED: readonly string[] = ["DOWN", ...SLURM_DRAIN_WORDS, "NOT_RESPONDING"];
/** Running work. */
export const SLURM_BUSY: readonly string[] = ["ALLOCATED", "MIXED", "COMPLETING"];

/** A node's state and flags as one upper-case list. */
export const slurmNodeWords = (state: string | null, flags: readonly string[]): string[] =>
  (state === null ? flags : [state, ...flags]).map((w) => w.toUpperCase());

export const isSlurmDrained = (state: string | null, flags: readonly string[]): boolean =>
  slurmNodeWords(state, flags).some((w) => SLURM_DRAIN_WORDS.includes(w));

/** The words that keep a node from taking a handed-over workload, in the order SLURM gave them. */
export const slurmUnavailableWords = (state: string | null, flags: readonly string[]): string[] =>
  slurmNodeWords(state, flags).filter((w) => SLURM_FAILED.includes(w) || SLURM_IMPAIRED.includes(w));

/** Words of a node whose slurmd has not (yet) registered with slurmctld. */
export const SLURM_UNREGISTERED: readonly string[] = [
  "UNKNOWN",
  "FUTURE",
  "NOT_RESPONDING",
  "POWERED_DOWN",
  "POWERING_UP",
];

/** Whether the node's slurmd has registered with the controller (it may still be down or drained). */
export const isSlurmNodeRegistered = (state: string | null, flags: readonly string[]): boolean =>
  state !== null && !slurmNodeWords(state, flags).some((w) => SLURM_UNREGISTERED.includes(w));

/** Whether a registered node still needs a resume to take work: down or drained. */
export const slurmNodeNeedsResume = (state: string | null, flags: readonly string[]): boolean =>
  slurmNodeWords(state, flags).some((w) => w === "DOWN" || SLURM_DRAIN_WORDS.includes(w));

/*
 * Names. `deviceNamePrefix` (rollout guide, temporalWorker.slurm): a device's name is the prefix
 * followed by its SLURM node's name (prefix `kef-`: node `gpu001` is device `kef-gpu001`). Empty:
 * the node's name is the device's. A node name the hub has already recorded on a device (from the
 * SLURM agent's push) wins over the rule.
 */
/** The prefix as the agents' configuration takes it (SLURM_DEVICE_NAME_PREFIX). */
export const SlurmDeviceNamePrefix = z
  .string()
  .max(100)
  .default("")
  .describe("A device's name is this prefix and its SLURM node's name (temporalWorker.slurm.deviceNamePrefix)");

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);

/** The device a node is by name: prefix + node name; `undefined` (the node's own name) without a prefix. */
export function deviceNameOfSlurmNode(node: string, prefix: string): string | undefined {
  return prefix ? clip(prefix + node, 200) : undefined;
}

/** The SLURM node a device is: the one the hub recorded, else its name without the prefix; null when it has none. */
export function slurmNodeNameOf(deviceName: string, recordedNodeName: string | null, prefix: string): string | null {
  if (recordedNodeName) return recordedNodeName;
  if (!prefix) return deviceName;
  return deviceName.startsWith(prefix) && deviceName.length > prefix.length ? deviceName.slice(prefix.length) : null;
}
