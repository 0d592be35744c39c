/**
 * A cordon in the hub (an operator's or an impairment's) → SLURM drain, as the OpenStack agent mirrors it into Ironic
 * maintenance: a cordoned device's node is drained with reason `fleet-manager cordon: <reason>`
 * (running jobs finish, no new ones start); uncordon undrains it.
 *
 * The agent only ever undrains a drain it made. It recognises its own by the reason prefix
 * `CORDON_REASON_PREFIX` (@fm/domain, the Ironic mirror's too), which lives in SLURM, so the
 * rule holds across restarts and replicas with no local state. An operator's drain (another reason) is never replaced nor cleared; a node SLURM
 * itself has set DOWN or FAIL is left alone while cordoned (it runs nothing; draining it would
 * overwrite SLURM's reason), and undrain, unlike resume, leaves such a base state as it is.
 */
import { CORDON_REASON_PREFIX, isSlurmDrained, type SlurmItem } from "@fm/domain";

/** A cordoned device, by the SLURM node it is. */
export interface CordonedNode {
  node: string;
  reason: string | null;
}

export type DrainAction = { node: string; action: "drain"; reason: string } | { node: string; action: "undrain" };

/** SLURM's own out-of-service base states and flags: not ours to drain over. */
const SLURM_OUT = new Set(["DOWN", "FAIL", "FAILING"]);

/** Whether the node is drained or draining, by anyone. */
export const isDrained = (n: Pick<SlurmItem, "state" | "flags">) => isSlurmDrained(n.state, n.flags);

/** Whether the drain is the agent's own (its reason carries the marker). */
export const isOurDrain = (n: Pick<SlurmItem, "state" | "flags" | "reason">) =>
  isDrained(n) && (n.reason ?? "").startsWith(CORDON_REASON_PREFIX);

/** The drain reason of a cordon: the marker and the hub's reason, on one line. */
export function drainReason(cordonReason: string | null): string {
  // One line, no control characters: it is an argument of `scontrol update`.
  const text = (cordonReason ?? "cordoned in Fleet Manager").replace(/\p{Cc}+/gu, " ").trim();
  return `${CORDON_REASON_PREFIX}${text || "cordoned in Fleet Manager"}`.slice(0, 1000);
}

/** What to change in SLURM so drains follow the hub's cordons. Pure. */
export function planDrains(nodes: readonly SlurmItem[], cordoned: readonly CordonedNode[]): DrainAction[] {
  const byNode = new Map(cordoned.map((c) => [c.node, c]));
  const actions: DrainAction[] = [];
  for (const node of nodes) {
    const cordon = byNode.get(node.name);
    const ours = isOurDrain(node);
    if (cordon) {
      const reason = drainReason(cordon.reason);
      const slurmOut = [node.state ?? "", ...node.flags].some((w) => SLURM_OUT.has(w.toUpperCase()));
      // Not drained: drain. Ours with an outdated reason: refresh it. Someone else's drain, or
      // SLURM's own DOWN/FAIL: leave it, the node takes no new work either way.
      if ((!isDrained(node) && !slurmOut) || (ours && node.reason !== reason))
        actions.push({ node: node.name, action: "drain", reason });
    } else if (ours) {
      actions.push({ node: node.name, action: "undrain" });
    }
  }
  return actions;
}
