/**
 * SLURM node → the hub's reflection item (domain `SlurmItemSchema`), and node names ↔ device
 * names. Pure, so the mapping is tested without SLURM and shared by the agent and the benchmark.
 *
 * `deviceNamePrefix` (rollout guide, temporalWorker.slurm): a device's name is the prefix followed
 * by its SLURM node's name (prefix `kef-`: node `gpu001` is device `kef-gpu001`). Empty: the
 * node's name is the device's. A node whose name the hub has already recorded on a device is
 * matched by that first.
 */
import type { SlurmItem } from "@fm/domain";
import type { SlurmNode } from "@fm/clients";

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);

/** The device a node is by name: prefix + node name; `undefined` (the node's own name) without a prefix. */
export function deviceNameOf(node: string, prefix: string): string | undefined {
  return prefix ? clip(prefix + node, 200) : undefined;
}

/** The SLURM node a device is: the one the hub recorded, else its name without the prefix; null when it has none. */
export function nodeNameOf(
  device: { name: string; slurm: { nodeName: string | null } },
  prefix: string,
): string | null {
  if (device.slurm.nodeName) return device.slurm.nodeName;
  if (!prefix) return device.name;
  return device.name.startsWith(prefix) && device.name.length > prefix.length ? device.name.slice(prefix.length) : null;
}

export function toReflectionItem(node: SlurmNode, prefix: string): SlurmItem {
  const device = deviceNameOf(node.name, prefix);
  return {
    name: clip(node.name, 200),
    ...(device === undefined ? {} : { device }),
    // Upper case, as the hub's state rules read SLURM's words (IDLE, DRAIN, DOWN...).
    state: clip(node.state.toUpperCase(), 40),
    flags: node.stateFlags.slice(0, 50).map((f) => clip(f.toUpperCase(), 40)),
    reason: node.reason === null ? null : clip(node.reason, 10_000),
    partitions: node.partitions.slice(0, 100).map((p) => clip(p, 100)),
  };
}
