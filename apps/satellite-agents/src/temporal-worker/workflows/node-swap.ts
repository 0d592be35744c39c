/**
 * NODE_SWAP: a never-enrolled spare takes a failed tray's place.
 *
 *  validate → bmc-macs → netbox-macs → hub-cordon → ironic-maintenance → netbox-rack →
 *  netbox-cables → topology-sync → hub-record
 *
 * The order is the rollout guide's: the spare's frontend MACs are read from its BMC and made
 * NetBox MAC address objects (its interfaces' primary MACs) before anything is written to Fleet
 * Manager, Nova or Ironic, so a token without `dcim.add_macaddress` fails the swap at
 * netbox-macs with the hub and Ironic untouched, and a rerun reuses what an attempt created.
 * Then the failed tray is taken out of service (cordoned on the hub, its Ironic node in
 * maintenance with the swap's reason) and NetBox moves rack locations (the failed tray unracked,
 * the spare into its rack, position and face).
 *
 * The failed tray's cables in NetBox decide the kind of swap: without any (cableless), the
 * failed tray is set `offline` and its removal declared to the topology service (the site's
 * topology-sync request, at a site with a region); with cables (a GB300 tray replacement), each
 * is deleted and recreated from the spare's interface of the same name to the same far end.
 * BMC credentials are resolved in the activity that logs in, by the spare's name: no input,
 * result or history holds one.
 */
import { ApplicationFailure } from "@temporalio/workflow";
import { WORKFLOW_STEPS, nodeSwapReason, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick } from "./proxies.ts";
import { Steps, preflight, skipped } from "./steps.ts";

export async function nodeSwapWorkflow(input: JobWorkflowInput<"NODE_SWAP">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.NODE_SWAP);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const failed = plan.devices[0]!;
  const swap = await steps.run(
    "validate",
    async () => {
      if (plan.devices.length !== 1)
        throw ApplicationFailure.nonRetryable(
          `a node swap replaces one failed tray; this job names ${plan.devices.length} devices`,
          "BadInput",
        );
      return quick.swapPlan({ failed, spareDeviceId: input.params.spareDeviceId });
    },
    (p) =>
      p.moved
        ? `${p.spare.name} already holds ${p.failed.name}'s place in NetBox`
        : `${p.spare.name} takes ${p.failed.name}'s place: rack ${p.target.rack} U${p.target.position}`,
  );
  const { spare } = swap;
  const macs = await steps.run(
    "bmc-macs",
    () => quick.swapBmcMacs(spare),
    (nics) => nics.map((n) => `${n.id} ${n.mac}`).join(", "),
  );
  await steps.run(
    "netbox-macs",
    () => quick.swapNetboxMacs(spare, macs),
    (m) => m,
  );
  const reason = nodeSwapReason(failed.name, spare.name, input.jobName);
  await steps.run("hub-cordon", () =>
    quick.hubCordon(input.jobId, [{ deviceId: failed.deviceId, cordoned: true, reason }]),
  );
  if (failed.ironicInstance)
    await steps.run(
      "ironic-maintenance",
      () => quick.ironicMaintenance(failed, `fleet-manager ${reason}`.slice(0, 255)),
      (m) => m,
    );
  else steps.skip("ironic-maintenance", `${failed.name} has no role that maps to an Ironic instance`);
  await steps.run(
    "netbox-rack",
    () => quick.swapNetboxRack(swap),
    (m) => m,
  );
  const cabled = swap.cabled ?? (swap.cables?.length ?? 0) > 0;
  if (!cabled) steps.skip("netbox-cables", `${failed.name} has no cables in NetBox (a cableless swap)`);
  else
    await steps.run(
      "netbox-cables",
      () => quick.swapNetboxCables(swap),
      (m) => m,
    );
  if (cabled) steps.skip("topology-sync", "a cabled swap: NetBox's cables say where the spare is connected");
  else if (!plan.site.topologyRegion)
    steps.skip("topology-sync", `${plan.site.slug} is no topology target (no region)`);
  else
    await steps.run(
      "topology-sync",
      () => quick.hubTopologySync(input.jobId, `${reason}: cableless swap`.slice(0, 1000)),
      () => `requested for region ${plan.site.topologyRegion}`,
    );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, [failed]));
  return steps.snapshot();
}
