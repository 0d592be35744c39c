/**
 * NODE_SWAP activities: the plan (both trays read from the hub and NetBox, checked before
 * anything is written), the spare's frontend MACs read from its BMC, their NetBox MAC address
 * objects and primary MACs, and the rack move. Each looks before it acts, so a rerun after a
 * failure reuses what an earlier attempt wrote and sends nothing NetBox already holds.
 */
import {
  cableMovesOf,
  ensureInterfaceMac,
  moveCable,
  placeDevice,
  placeOf,
  setPrimaryMac,
  SwapRefusedError,
  type NetboxMacAddress,
  type RackPlace,
} from "@fm/clients";
import { canonicalMac } from "@fm/domain";
import type { DevicePlan, NodeSwapPlan } from "@fm/domain/workflows";
import { planOf } from "./hub.ts";
import { netboxIdOf, netboxOf, type ActivityDeps } from "./deps.ts";
import { BmcCredentialsError } from "./bmc-credentials.ts";
import { badInput, guarded, isFinal, notConfigured, sourceRejected } from "./failures.ts";
import { readBmcEthernetInterfaces, RedfishReadError, type BmcEthernetInterface } from "./redfish-macs.ts";

type SwapDeps = Pick<ActivityDeps, "site" | "hub" | "netbox" | "bmcCredentials" | "redfish">;

export function nodeSwapActivities(deps: SwapDeps) {
  return {
    swapPlan: (a: { failed: DevicePlan; spareDeviceId: string }) => swapPlan(deps, a),
    swapBmcMacs: (spare: DevicePlan) => swapBmcMacs(deps, spare),
    swapNetboxMacs: (spare: DevicePlan, macs: BmcEthernetInterface[]) => swapNetboxMacs(deps, spare, macs),
    swapNetboxRack: (plan: NodeSwapPlan) => swapNetboxRack(deps, plan),
    swapNetboxCables: (plan: NodeSwapPlan) => swapNetboxCables(deps, plan),
  };
}

/**
 * validate: the spare is another device of this site, never enrolled (NetBox `staged`, no
 * Ironic node); the failed tray holds a rack position for the spare to take. Its cables (a
 * cabled GB300 tray) are recorded for netbox-cables, each needing a free interface of the same
 * name on the spare.
 * A rerun after the rack move finds the failed tray in its rack without a position and the
 * spare (still staged) racked in that rack: the move is then done, and the spare's position is
 * the target. Then the tray's status tells the kind of swap: a cableless swap set it `offline`
 * with the move, a cabled one leaves it; cables still on it are moved, those on the spare are done.
 */
async function swapPlan(
  deps: SwapDeps,
  { failed, spareDeviceId }: { failed: DevicePlan; spareDeviceId: string },
): Promise<NodeSwapPlan> {
  return guarded(async () => {
    if (spareDeviceId === failed.deviceId) throw badInput(`${failed.name} cannot be its own spare`);
    const spareDevice = await deps.hub.getDevice(spareDeviceId);
    const spare = planOf(spareDevice);
    if (spareDevice.site.slug !== deps.site)
      throw badInput(
        `spare ${spare.name} is at site ${spareDevice.site.slug}; the failed tray ${failed.name} at ${deps.site}`,
      );
    if (spareDevice.ironic.nodeUuid)
      throw badInput(
        `spare ${spare.name} is enrolled (Ironic node ${spareDevice.ironic.nodeUuid}): a spare is never-enrolled`,
      );
    const netbox = netboxOf(deps);
    const [nbFailed, nbSpare] = await Promise.all([
      netbox.device(netboxIdOf(failed)),
      netbox.device(netboxIdOf(spare)),
    ]);
    if (nbSpare.site.id !== nbFailed.site.id)
      throw badInput(
        `spare ${spare.name} is at NetBox site ${nbSpare.site.slug}, the failed tray ${failed.name} at ${nbFailed.site.slug}`,
      );
    const failedPlace = placeOf(nbFailed);
    const sparePlace = placeOf(nbSpare);
    const moved =
      failedPlace.rack !== null &&
      failedPlace.position === null &&
      sparePlace.rack === failedPlace.rack &&
      sparePlace.position !== null &&
      nbSpare.status.value === "staged";
    if (!moved && nbSpare.status.value !== "staged")
      throw badInput(`spare ${spare.name} is ${nbSpare.status.value} in NetBox; a spare is staged`);
    if (!moved && (failedPlace.rack === null || failedPlace.position === null))
      throw badInput(`${failed.name} has no rack position in NetBox: there is nothing for the spare to take`);
    const [failedIfaces, spareIfaces] = await Promise.all([
      netbox.interfaces({ device_id: nbFailed.id }),
      netbox.interfaces({ device_id: nbSpare.id }),
    ]);
    const cabledIfaces = new Map(failedIfaces.filter((i) => i.cable).map((i) => [i.id, i.name]));
    const cables = cabledIfaces.size ? cableMovesOf(await netbox.cables({ device_id: nbFailed.id }), cabledIfaces) : [];
    // Each cable lands on the spare's interface of the same name, which must be free.
    for (const c of cables) {
      const target = spareIfaces.find((i) => i.name === c.iface);
      if (!target)
        throw badInput(`spare ${spare.name} has no interface ${c.iface} for ${failed.name}'s cable ${c.cableId}`);
      if (target.cable)
        throw badInput(`spare ${spare.name} ${c.iface} is already cabled (cable ${target.cable.id}) in NetBox`);
    }
    const cabled = cables.length > 0 || (moved && nbFailed.status.value !== "offline");
    return { failed, spare, target: moved ? sparePlace : failedPlace, moved, cables, cabled };
  });
}

/**
 * bmc-macs: the spare's host Ethernet interfaces and their MACs, read from its BMC over Redfish
 * with its credentials, resolved here by the device's name (never an input or a result).
 */
async function swapBmcMacs(deps: SwapDeps, spare: DevicePlan): Promise<BmcEthernetInterface[]> {
  return guarded(async () => {
    if (!spare.bmcAddress) throw badInput(`spare ${spare.name} has no BMC address (NetBox oob_ip)`);
    if (!deps.bmcCredentials)
      throw notConfigured(`this worker has no BMC_CREDENTIALS_DIR: it cannot log in to the BMC of spare ${spare.name}`);
    let credentials;
    try {
      credentials = await deps.bmcCredentials.forDevice(spare.name);
    } catch (err) {
      if (err instanceof BmcCredentialsError) throw notConfigured(err.message);
      throw err;
    }
    try {
      const nics = await readBmcEthernetInterfaces({
        baseUrl: deps.redfish.addressTemplate.replaceAll("{address}", spare.bmcAddress),
        credentials,
        systemId: deps.redfish.systemId,
      });
      if (!nics.length) throw badInput(`the BMC of spare ${spare.name} lists no Ethernet interface with a MAC`);
      return nics;
    } catch (err) {
      // A refusal (401, 404) is final; a BMC that does not answer is retried.
      if (err instanceof RedfishReadError && err.status !== undefined && err.status < 500)
        throw sourceRejected(err.message);
      throw err;
    }
  });
}

/**
 * netbox-macs: for each frontend interface of the spare in NetBox (not management-only) named as
 * a BMC Ethernet interface, its MAC as a dcim.macaddress object assigned to it (reused when
 * there, refused when NetBox records it anywhere else, else created), then set as its primary
 * MAC. All MACs are looked up before the first is created, so a MAC recorded elsewhere refuses
 * the swap with nothing written.
 */
async function swapNetboxMacs(deps: SwapDeps, spare: DevicePlan, macs: BmcEthernetInterface[]): Promise<string> {
  return guarded(async () => {
    const netbox = netboxOf(deps);
    const ifaces = (await netbox.interfaces({ device_id: netboxIdOf(spare) })).filter((i) => !i.mgmt_only);
    const pairs = ifaces.flatMap((i) => {
      const nic = macs.find((m) => m.id === i.name);
      return nic ? [{ iface: i, mac: canonicalMac(nic.mac) }] : [];
    });
    if (!pairs.length)
      throw badInput(
        `none of the BMC's Ethernet interfaces (${macs.map((m) => m.id).join(", ")}) is a frontend interface of spare ${spare.name} in NetBox`,
      );
    const bad = pairs.find((p) => !p.mac);
    if (bad) throw badInput(`the BMC of spare ${spare.name} reports no valid MAC for ${bad.iface.name}`);
    const where = (r: NetboxMacAddress) =>
      r.assigned_object
        ? `${r.assigned_object.device?.name ?? "?"} ${r.assigned_object.name}`
        : "no interface (unassigned)";
    for (const p of pairs) {
      const found = await netbox.macAddresses({ mac_address: p.mac! });
      const elsewhere = found.filter(
        (r) => r.assigned_object_type !== "dcim.interface" || r.assigned_object_id !== p.iface.id,
      );
      if (elsewhere.length)
        throw badInput(
          `MAC ${p.mac} of spare ${spare.name} ${p.iface.name} is recorded in NetBox on ${elsewhere.map(where).join(", ")}: refused`,
        );
    }
    const counts = { created: 0, reused: 0, primary: 0 };
    for (const p of pairs) {
      const r = await ensureInterfaceMac(netbox, p.iface.id, p.mac!);
      if (r.outcome === "elsewhere")
        throw badInput(
          `MAC ${p.mac} of spare ${spare.name} ${p.iface.name} is recorded in NetBox on ${r.records.map(where).join(", ")}: refused`,
        );
      counts[r.outcome]++;
      if (await setPrimaryMac(netbox, p.iface.id, r.mac.id)) counts.primary++;
    }
    return `${pairs.length} frontend MAC(s): ${counts.created} created, ${counts.reused} reused, ${counts.primary} primary set`;
  });
}

/**
 * netbox-rack: the failed tray out of its units (kept in its rack and location, no position, so
 * a rerun recognises the move) and, in a cableless swap, `offline`; then the spare into the
 * failed tray's rack, position and face. NetBox refuses a position whose units another device
 * holds, hence this order. If NetBox refuses the spare's place, the failed tray is put back where
 * it was before the step fails: a new job then starts from NetBox as it was.
 */
async function swapNetboxRack(deps: SwapDeps, plan: NodeSwapPlan): Promise<string> {
  return guarded(async () => {
    const netbox = netboxOf(deps);
    const unracked: RackPlace = { location: plan.target.location, rack: plan.target.rack, position: null, face: null };
    // A cableless swap sets the failed tray offline (the rollout guide's table); a cabled one only moves it.
    const cabled = plan.cabled ?? (plan.cables?.length ?? 0) > 0;
    const failedId = netboxIdOf(plan.failed);
    const before = plan.moved ? null : await netbox.device(failedId);
    const failedChanged = await placeDevice(netbox, failedId, unracked, cabled ? undefined : "offline");
    let spareChanged: boolean;
    try {
      spareChanged = await placeDevice(netbox, netboxIdOf(plan.spare), plan.target);
    } catch (err) {
      if (before && isFinal(err)) await placeDevice(netbox, failedId, placeOf(before), before.status.value);
      throw err;
    }
    return failedChanged || spareChanged
      ? `${plan.spare.name} now at rack ${plan.target.rack} U${plan.target.position} (${plan.target.face}); ${plan.failed.name} unracked${cabled ? "" : ", offline"}`
      : `already moved: ${plan.spare.name} at rack ${plan.target.rack} U${plan.target.position}`;
  });
}

/**
 * netbox-cables (a cabled swap): each of the failed tray's cables, recorded at validate, deleted
 * and recreated from the spare's interface of the same name to the same far end, with the same
 * status, type, label, colour, length and description. One the spare already has is left.
 */
async function swapNetboxCables(deps: SwapDeps, plan: NodeSwapPlan): Promise<string> {
  return guarded(async () => {
    const netbox = netboxOf(deps);
    const spareIfaces = await netbox.interfaces({ device_id: netboxIdOf(plan.spare) });
    const counts = { moved: 0, already: 0 };
    for (const c of plan.cables ?? []) {
      const target = spareIfaces.find((i) => i.name === c.iface);
      if (!target) throw badInput(`spare ${plan.spare.name} has no interface ${c.iface}`);
      try {
        counts[await moveCable(netbox, c, target.id)]++;
      } catch (err) {
        if (err instanceof SwapRefusedError) throw badInput(err.message);
        throw err;
      }
    }
    return `${counts.moved + counts.already} cable(s) on ${plan.spare.name}: ${counts.moved} moved, ${counts.already} already there`;
  });
}
