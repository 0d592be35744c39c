/**
 * SLURM node → the hub's reflection item (domain `SlurmItemSchema`). Pure, so the mapping is
 * tested without SLURM and shared by the agent and the benchmark. Node names ↔ device names
 * (`deviceNamePrefix`) are the domain's (`slurm-nodes.ts`): the worker reads them too.
 */
import { deviceNameOfSlurmNode, slurmNodeNameOf, type SlurmItem } from "@fm/domain";
import type { SlurmNode } from "@fm/clients";

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);

/** The SLURM node a device is (see `slurmNodeNameOf`). */
export const nodeNameOf = (device: { name: string; slurm: { nodeName: string | null } }, prefix: string) =>
  slurmNodeNameOf(device.name, device.slurm.nodeName, prefix);

export function toReflectionItem(node: SlurmNode, prefix: string): SlurmItem {
  const device = deviceNameOfSlurmNode(node.name, prefix);
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
