/**
 * Ironic activities: enrol, inspect, point at the BMC, provide, check, tear down, rebuild. Each
 * looks before it acts (the node by name, its state, a rebuild marker in its `extra`) and
 * accepts "already done" when two attempts race, so a retry applies nothing twice.
 */
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, nodeRef, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";
import { inOrPast, ironicTransitions } from "./ironic-transitions.ts";

/** Where each driver finds the BMC (default `bmc_address`). */
const BMC_ADDRESS_FIELD: Record<string, string> = {
  redfish: "redfish_address",
  ipmi: "ipmi_address",
  idrac: "redfish_address",
};

type IronicDeps = Pick<ActivityDeps, "ironic" | "ironicDriver" | "deployImages" | "pollIntervalMs">;

export function ironicActivities(deps: IronicDeps) {
  return {
    ironicEnroll: (d: DevicePlan) => ironicEnroll(deps, d),
    ironicInspect: (d: DevicePlan) => ironicInspect(deps, d),
    configureBmc: (d: DevicePlan) => configureBmc(deps, d),
    ironicProvide: (d: DevicePlan) => ironicProvide(deps, d),
    ironicCheck: (d: DevicePlan) => ironicCheck(deps, d),
    ironicTeardown: (d: DevicePlan) => ironicTeardown(deps, d),
    ironicRebuild: (d: DevicePlan, o: { image: string; marker: string }) => ironicRebuild(deps, d, o),
  };
}

/** Creates the Ironic node unless one of that name exists, then brings it to `manageable`. */
async function ironicEnroll(deps: IronicDeps, d: DevicePlan): Promise<string> {
  const { waitFor, request } = ironicTransitions(deps);
  return guarded(async () => {
    const client = ironicFor(deps, d);
    let node = (d.ironicNodeUuid ? await client.findNode(d.ironicNodeUuid) : null) ?? (await client.findNode(d.name));
    const bmc = bmcDriverInfo(deps, d);
    const deployImages = deployDriverInfo(deps);
    if (!node) {
      node = await client.createNode({
        name: d.name,
        driver: deps.ironicDriver,
        driver_info: { [bmc.key]: bmc.value, ...deployImages },
        ...(d.resourceClass ? { resource_class: d.resourceClass } : {}),
        extra: { fleet_manager_device_id: d.deviceId },
      });
    } else if (node.extra.fleet_manager_device_id && node.extra.fleet_manager_device_id !== d.deviceId) {
      throw badInput(`Ironic node ${node.name} (${node.uuid}) belongs to another Fleet Manager device`);
    }
    if (node.provision_state === "enroll" && !node.target_provision_state) {
      // `manage` verifies the BMC credentials: the address must be there first.
      const missing = Object.entries({ [bmc.key]: bmc.value, ...deployImages }).filter(
        ([key, value]) => node!.driver_info?.[key] !== value,
      );
      if (missing.length)
        await client.patchNode(
          node.uuid,
          missing.map(([key, value]) => ({ op: "add" as const, path: `/driver_info/${key}`, value })),
        );
      await request(
        client,
        node.uuid,
        "manage",
        inOrPast(
          "verifying",
          "manageable",
          "inspecting",
          "inspect wait",
          "cleaning",
          "clean wait",
          "available",
          "active",
        ),
      );
    }
    // A failed verification puts the node back in `enroll` with last_error: resting there is a failure.
    await waitFor(client, node.uuid, ["manageable", "available", "active"], ["verifying"], "manage");
    return node.uuid;
  });
}

/** Hardware inspection (once: a node already inspected or already available is left alone). */
async function ironicInspect(deps: IronicDeps, d: DevicePlan): Promise<void> {
  const { waitFor, request } = ironicTransitions(deps);
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const node = await client.getNode(nodeRef(d));
    if (node.provision_state === "manageable" && !node.target_provision_state && !node.inspection_finished_at)
      await request(
        client,
        node.uuid,
        "inspect",
        (n) =>
          ["inspecting", "inspect wait", "available", "active"].includes(n.provision_state) ||
          Boolean(n.inspection_finished_at),
      );
    await waitFor(client, node.uuid, ["manageable", "available", "active"], ["inspecting", "inspect wait"], "inspect");
  });
}

/** Points the node's driver at its BMC and checks that Ironic can reach power and management. */
async function configureBmc(deps: IronicDeps, d: DevicePlan): Promise<void> {
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const { key, value } = bmcDriverInfo(deps, d);
    const node = await client.getNode(nodeRef(d));
    if (node.driver_info?.[key] !== value)
      await client.patchNode(node.uuid, [{ op: "add", path: `/driver_info/${key}`, value }]);
    const validation = await client.validateNode(node.uuid);
    const broken = ["power", "management"]
      .filter((i) => validation[i]?.result === false)
      .map((i) => `${i}: ${validation[i]?.reason ?? "invalid"}`);
    if (broken.length) throw badInput(`Ironic cannot use the BMC of ${d.name}: ${broken.join("; ")}`);
  });
}

/** manageable → cleaning → available. */
async function ironicProvide(deps: IronicDeps, d: DevicePlan): Promise<void> {
  const { drive } = ironicTransitions(deps);
  return guarded(() =>
    drive(d, {
      from: "manageable",
      target: "provide",
      passing: ["cleaning", "clean wait"],
      want: ["available", "active"],
    }),
  );
}

async function ironicCheck(deps: IronicDeps, d: DevicePlan): Promise<string> {
  return guarded(async () => {
    const node = await ironicFor(deps, d).findNode(nodeRef(d));
    if (!node) throw badInput(`Ironic has no node for ${d.name}`);
    return node.provision_state;
  });
}

/** active → deleted (cleaning wipes the disks) → available. */
async function ironicTeardown(deps: IronicDeps, d: DevicePlan): Promise<void> {
  const { drive } = ironicTransitions(deps);
  return guarded(() =>
    drive(d, {
      from: "active",
      target: "deleted",
      passing: ["deleting", "cleaning", "clean wait"],
      want: ["available"],
    }),
  );
}

/**
 * Rebuild with the image, once per job: the node's extra.fleet_manager_rebuild records which
 * workflow asked, so a retry after a lost answer waits for that rebuild instead of starting
 * another; a retry after a worker died between the record and the request (the node has
 * not moved since) asks again.
 */
async function ironicRebuild(deps: IronicDeps, d: DevicePlan, o: { image: string; marker: string }): Promise<void> {
  const { waitFor, request } = ironicTransitions(deps);
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const node = await client.getNode(nodeRef(d));
    // The marker holds Ironic's own provision_updated_at from before the request (no clock
    // of ours is compared with Ironic's): if it changed since, the rebuild happened.
    const mark = node.extra.fleet_manager_rebuild as { by?: string; before?: string | null } | undefined;
    const ours = mark?.by === o.marker;
    const moved = ours && node.provision_updated_at !== (mark.before ?? null);
    if (!ours) {
      if (node.provision_state !== "active")
        throw badInput(`${d.name} has no instance to reimage (Ironic ${node.provision_state})`);
      await client.patchNode(node.uuid, [
        { op: "add", path: "/instance_info/image_source", value: o.image },
        {
          op: "add",
          path: "/extra/fleet_manager_rebuild",
          value: { by: o.marker, before: node.provision_updated_at },
        },
      ]);
    }
    if (!moved && node.provision_state === "active" && !node.target_provision_state)
      await request(
        client,
        node.uuid,
        "rebuild",
        (n) => n.provision_state !== "active" || n.target_provision_state !== null,
      );
    await waitFor(client, node.uuid, ["active"], ["deploying", "wait call-back", "cleaning", "clean wait"], "rebuild");
  });
}

/** The site's IPA deploy kernel and ramdisk as Ironic's driver_info fields, when the worker has them. */
function deployDriverInfo(deps: Pick<ActivityDeps, "deployImages">): Record<string, string> {
  return deps.deployImages
    ? { deploy_kernel: deps.deployImages.kernel, deploy_ramdisk: deps.deployImages.ramdisk }
    : {};
}

/** Where the driver finds the BMC: redfish_address (https://), ipmi_address, or bmc_address. */
function bmcDriverInfo(deps: Pick<ActivityDeps, "ironicDriver">, d: DevicePlan): { key: string; value: string } {
  if (!d.bmcAddress) throw badInput(`${d.name} has no BMC address`);
  return {
    key: BMC_ADDRESS_FIELD[deps.ironicDriver] ?? "bmc_address",
    value: deps.ironicDriver === "redfish" ? `https://${d.bmcAddress}` : d.bmcAddress,
  };
}
