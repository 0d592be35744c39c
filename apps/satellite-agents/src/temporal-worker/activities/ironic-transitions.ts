/**
 * Driving an Ironic node through its state machine from an activity: ask for a transition,
 * then poll until the node rests, heartbeating each poll. Shared by every Ironic activity.
 */
import { Context } from "@temporalio/activity";
import { IronicApiError, type IronicClient, type IronicNode } from "@fm/clients";
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, nodeRef, type ActivityDeps } from "./deps.ts";
import { sourceRejected } from "./failures.ts";

const RE_REQUEST_AFTER_MS = 15_000;

/** Ironic states a node passes through on its own; anything else is where it stopped. */
const FAILED_STATES = new Set([
  "clean failed",
  "inspect failed",
  "deploy failed",
  "error",
  "rescue failed",
  "unrescue failed",
  "service failed",
]);

/** What a provision request carries besides its target (a config drive for `active`). */
export type ProvisionBody = Parameters<IronicClient["setProvisionState"]>[2];

/** A node is in or past one of these states. */
export const inOrPast =
  (...states: string[]) =>
  (n: IronicNode) =>
    states.includes(n.provision_state);

/** Polls a failed node is read again for Ironic's reason before the failure is reported without one. */
const REASON_POLLS = 3;

export function ironicTransitions(deps: Pick<ActivityDeps, "ironic" | "pollIntervalMs">) {
  /**
   * Polls the node until it rests in one of `want`, heartbeating each poll. A failed state, or
   * a resting state that is neither wanted nor `passing`, ends the wait with Ironic's last_error.
   * With `retry`, a node still resting in the state the request left from after
   * RE_REQUEST_AFTER_MS is asked again: Ironic acknowledged (202) but its conductor never took
   * the request up (seen under load with 50 nodes at once), and asking again is harmless there.
   */
  async function waitFor(
    client: IronicClient,
    ref: string,
    want: readonly string[],
    passing: readonly string[],
    what: string,
    retry?: { from: string; target: string; settled: (n: IronicNode) => boolean; body?: ProvisionBody },
  ): Promise<IronicNode> {
    const ctx = Context.current();
    let askedAt = Date.now();
    let reasonPolls = 0;
    for (;;) {
      const node = await client.getNode(ref);
      ctx.heartbeat({ provisionState: node.provision_state, target: node.target_provision_state });
      const resting = !node.target_provision_state;
      if (resting && want.includes(node.provision_state)) return node;
      const failed = FAILED_STATES.has(node.provision_state);
      // A timeout's handler records last_error after the failed state is saved (seen once in a
      // deploy timeout): a failure read without its reason is read again, a few polls at most.
      if (failed && !node.last_error && reasonPolls++ < REASON_POLLS) {
        await ctx.sleep(deps.pollIntervalMs);
        continue;
      }
      if (failed || (resting && !passing.includes(node.provision_state))) {
        throw sourceRejected(
          `${what}: node ${node.name ?? node.uuid} is ${node.provision_state}${node.last_error ? `: ${node.last_error}` : ""}`,
        );
      }
      if (retry && resting && node.provision_state === retry.from && Date.now() - askedAt > RE_REQUEST_AFTER_MS) {
        await request(client, node.uuid, retry.target, retry.settled, retry.body);
        askedAt = Date.now();
      }
      await ctx.sleep(deps.pollIntervalMs); // rejects when the activity is cancelled
    }
  }

  /**
   * Asks for a transition. A node locked by the conductor (409) is asked again at the next poll.
   * A refusal (400) because the node already moved on — another attempt of this activity asked
   * first (Temporal retries an attempt whose heartbeat it lost, while that attempt may still be
   * running) — counts as done when `settled(node)` says the node is where the request leads.
   */
  async function request(
    client: IronicClient,
    ref: string,
    target: string,
    settled: (n: IronicNode) => boolean,
    body?: ProvisionBody,
  ): Promise<void> {
    const ctx = Context.current();
    for (let attempt = 0; ; attempt++) {
      ctx.heartbeat({ requesting: target });
      try {
        return await client.setProvisionState(ref, target, body);
      } catch (err) {
        if (err instanceof IronicApiError && err.status === 400 && settled(await client.getNode(ref))) return;
        if (!(err instanceof IronicApiError && err.status === 409) || attempt >= 30) throw err;
        await ctx.sleep(deps.pollIntervalMs);
      }
    }
  }

  /**
   * From a resting `from`, asks for `target` and waits until the node rests in one of `want`,
   * passing through `passing`. A node already past `from` is only waited for.
   */
  async function drive(
    d: DevicePlan,
    t: { from: string; target: string; passing: string[]; want: string[] },
  ): Promise<void> {
    const client = ironicFor(deps, d);
    const node = await client.getNode(nodeRef(d));
    const settled = inOrPast(...t.passing, ...t.want);
    if (node.provision_state === t.from && !node.target_provision_state)
      await request(client, node.uuid, t.target, settled);
    await waitFor(client, node.uuid, t.want, [t.from, ...t.passing], t.target, {
      from: t.from,
      target: t.target,
      settled,
    });
  }

  return { waitFor, request, drive };
}
