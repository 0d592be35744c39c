/**
 * Ironic activities: enrol, inspect, point at the BMC, provide, check, tear down, rebuild. Each
 * looks before it acts (the node by name, its state, a rebuild marker in its `extra`) and
 * accepts "already done" when two attempts race, so a retry applies nothing twice.
 */
import { KeystoneAuthError, type IronicNode } from "@fm/clients";
import { glanceImageRefProblem } from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import { BmcCredentialsError } from "./bmc-credentials.ts";
import { ironicFor, nodeRef, type ActivityDeps } from "./deps.ts";
import { BMC_CREDENTIAL_DRIVERS, driverInfoPatch, wantedDriverInfo, type DriverInfo } from "./driver-info.ts";
import { badInput, guarded, notConfigured } from "./failures.ts";
import { inOrPast, ironicTransitions } from "./ironic-transitions.ts";

type IronicDeps = Pick<
  ActivityDeps,
  | "ironic"
  | "ironicDriver"
  | "ironicBootInterface"
  | "deployImages"
  | "pollIntervalMs"
  | "bmcCredentials"
  | "redfish"
  | "enrolOwner"
>;

export function ironicActivities(deps: IronicDeps) {
  return {
    ironicRegister: (d: DevicePlan) => ironicRegister(deps, d),
    ironicEnroll: (d: DevicePlan) => ironicEnroll(deps, d),
    ironicInspect: (d: DevicePlan) => ironicInspect(deps, d),
    configureBmc: (d: DevicePlan) => configureBmc(deps, d),
    ironicProvide: (d: DevicePlan) => ironicProvide(deps, d),
    ironicCheck: (d: DevicePlan) => ironicCheck(deps, d),
    ironicTeardown: (d: DevicePlan) => ironicTeardown(deps, d),
    ironicRebuild: (d: DevicePlan, o: { image: string; marker: string }) => ironicRebuild(deps, d, o),
    ironicMaintenance: (d: DevicePlan, reason: string) => ironicMaintenance(deps, d, reason),
    ironicEndMaintenance: (d: DevicePlan, reason: string) => ironicEndMaintenance(deps, d, reason),
  };
}

/**
 * REPAIR: the node into maintenance with the repair's reason (Nova and Ironic's own periodic
 * tasks leave it alone). A node already in maintenance for another reason keeps it: that
 * reason (a failed clean, an operator's) says more than ours. A device with no node (never
 * enrolled) has nothing to put into maintenance.
 */
async function ironicMaintenance(deps: IronicDeps, d: DevicePlan, reason: string): Promise<string> {
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const node = await client.findNode(nodeRef(d));
    if (!node) return `${d.name}: no Ironic node`;
    if (node.maintenance && node.maintenance_reason !== reason)
      return `${d.name}: already in maintenance (${node.maintenance_reason ?? "no reason"}), left as it is`;
    if (!node.maintenance) await client.setMaintenance(node.uuid, reason);
    return `${d.name}: maintenance`;
  });
}

/** REPAIR release: takes the node out of the maintenance the repair set, and only that one. */
async function ironicEndMaintenance(deps: IronicDeps, d: DevicePlan, reason: string): Promise<void> {
  return guarded(async () => {
    const client = ironicFor(deps, d);
    const node = await client.findNode(nodeRef(d));
    if (node?.maintenance && node.maintenance_reason === reason) await client.clearMaintenance(node.uuid);
  });
}

/**
 * Creates the Ironic node unless one of that name exists, and, while it is in `enroll`, gives it
 * the driver_info, resource class and owner it must hold. It stays in `enroll`: `bmc-configure`
 * (configureBmc) manages it, which is where Ironic checks the BMC credentials.
 */
async function ironicRegister(deps: IronicDeps, d: DevicePlan): Promise<string> {
  return guarded(async () => (await registered(deps, d)).uuid);
}

/**
 * The enrolment order before `bmc-configure` verified the BMC: registers the node and brings it
 * to `manageable` here. Kept for enrolments that started in that order.
 */
async function ironicEnroll(deps: IronicDeps, d: DevicePlan): Promise<string> {
  return guarded(async () => (await manage(deps, d, await registered(deps, d))).uuid);
}

async function registered(deps: IronicDeps, d: DevicePlan): Promise<IronicNode> {
  const client = ironicFor(deps, d);
  const node = (d.ironicNodeUuid ? await client.findNode(d.ironicNodeUuid) : null) ?? (await client.findNode(d.name));
  if (!node) {
    // A target project that cannot be resolved creates nothing.
    await ownerOf(deps, d);
    return client.createNode({
      name: d.name,
      driver: deps.ironicDriver,
      driver_info: await driverInfoOf(deps, d),
      ...(d.resourceClass ? { resource_class: d.resourceClass } : {}),
      ...(deps.ironicBootInterface ? { boot_interface: deps.ironicBootInterface } : {}),
      // No owner here: Ironic refuses a project-scoped creator any owner but its own project
      // (API nodes POST); a PATCH may change it, in manage().
      extra: { fleet_manager_device_id: d.deviceId },
    });
  }
  if (node.extra.fleet_manager_device_id && node.extra.fleet_manager_device_id !== d.deviceId)
    throw badInput(`Ironic node ${node.name} (${node.uuid}) belongs to another Fleet Manager device`);
  return node;
}

/**
 * Brings a node resting in `enroll` to `manageable`: Ironic verifies the BMC credentials there,
 * so a wrong password fails with Ironic's message (its last_error names the BMC's answer, never
 * the password). A node past `enroll` is left where it is.
 */
async function manage(deps: IronicDeps, d: DevicePlan, node: IronicNode): Promise<IronicNode> {
  const { waitFor, request } = ironicTransitions(deps);
  const client = ironicFor(deps, d);
  if (node.provision_state === "enroll" && !node.target_provision_state) {
    // The credentials must be there before `manage`. A node resting in `enroll` with last_error
    // failed that verification: its (masked) password is written again, the source's may have
    // been corrected since. The owner is set here, before the node can be seen by the target
    // project's users as available.
    const patch = [
      ...driverInfoPatch(node.driver_info, await driverInfoOf(deps, d), { rewriteSecrets: Boolean(node.last_error) }),
      ...fieldPatch(node, {
        resource_class: d.resourceClass,
        owner: await ownerOf(deps, d),
        boot_interface: deps.ironicBootInterface,
      }),
    ];
    if (patch.length) await client.patchNode(node.uuid, patch);
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
  return waitFor(client, node.uuid, ["manageable", "available", "active"], ["verifying"], "manage");
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

/**
 * Points the node's driver at its BMC (address, credentials, deploy images), has Ironic verify
 * the credentials (`manage` from `enroll`: a wrong password fails here with Ironic's message) and
 * checks that Ironic can use power and management. A node already past `manage` holds a verified
 * password: a masked one is left alone.
 */
async function configureBmc(deps: IronicDeps, d: DevicePlan): Promise<void> {
  return guarded(async () => {
    const client = ironicFor(deps, d);
    let node = await client.getNode(nodeRef(d));
    if (node.provision_state === "enroll" || node.provision_state === "verifying") node = await manage(deps, d, node);
    const patch = driverInfoPatch(node.driver_info, await driverInfoOf(deps, d));
    if (patch.length) await client.patchNode(node.uuid, patch);
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
    const problem = glanceImageRefProblem(o.image);
    if (problem) throw badInput(`${d.name}: image ${problem}`);
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

/**
 * The driver_info the node must hold, the device's BMC credentials resolved here, in the
 * activity, from the worker's credential source: they reach Ironic and nothing else.
 */
async function driverInfoOf(deps: IronicDeps, d: DevicePlan): Promise<DriverInfo> {
  if (!d.bmcAddress) throw badInput(`${d.name} has no BMC address`);
  let credentials;
  if (BMC_CREDENTIAL_DRIVERS.has(deps.ironicDriver)) {
    if (!deps.bmcCredentials)
      throw notConfigured(
        `this worker has no BMC_CREDENTIALS_DIR, but the ${deps.ironicDriver} hardware type logs in to the BMC of ${d.name}`,
      );
    try {
      credentials = await deps.bmcCredentials.forDevice(d.name);
    } catch (err) {
      if (err instanceof BmcCredentialsError) throw notConfigured(err.message);
      throw err;
    }
  }
  return wantedDriverInfo({
    driver: deps.ironicDriver,
    bmcAddress: d.bmcAddress,
    credentials,
    redfish: deps.redfish,
    deployImages: deps.deployImages,
  });
}

/** The enrol target project's id (the node's owner), when the worker has one configured. */
async function ownerOf(deps: IronicDeps, d: DevicePlan): Promise<string | undefined> {
  if (!deps.enrolOwner || !d.ironicInstance) return undefined;
  try {
    return await deps.enrolOwner(d.ironicInstance);
  } catch (err) {
    // No such project (or several): configuration to fix. Keystone down or erring: retried.
    if (err instanceof KeystoneAuthError && err.status === 404)
      throw notConfigured(`IRONIC_ENROL_TARGET_PROJECT_NAME: ${err.message}`);
    throw err;
  }
}

/** Replaces the node's top-level fields that differ from a wanted, non-null value. */
function fieldPatch(
  node: IronicNode,
  wanted: Record<"resource_class" | "owner" | "boot_interface", string | null | undefined>,
) {
  return Object.entries(wanted)
    .filter(([key, value]) => value && node[key] !== value)
    .map(([key, value]) => ({ op: "add" as const, path: `/${key}`, value: value! }));
}
