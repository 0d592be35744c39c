/**
 * The Ironic activities under Temporal's MockActivityEnvironment, against a real Ironic
 * (fake-hardware): the activities use the real client, and the assertions read the nodes back
 * with raw Ironic HTTP.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient } from "@fm/clients";
import { createNode, failClean, getNode, ironicRequest, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import {
  DEFAULT_REDFISH,
  WAITING,
  deadEndpoint,
  expectFinal,
  expectRetryable,
  plan,
  rejection,
  run,
} from "./activity-testing.ts";
import type { ActivityDeps } from "./deps.ts";
import { ironicActivities } from "./ironic.ts";

let ironic: IronicPeer;
beforeAll(async () => {
  ironic = await startIronic();
}, 120_000);
afterAll(() => ironic?.stop(), 60_000);

/** The Ironic activities as the worker builds them, on the real client; `over` replaces any dependency. */
const activities = (over: Partial<ActivityDeps> = {}) =>
  ironicActivities({
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    ironicDriver: "fake-hardware",
    redfish: DEFAULT_REDFISH,
    pollIntervalMs: 100,
    ...over,
  });

/** Every Ironic node with this name (uuids), read without the client under test. */
async function ironicNodesNamed(name: string): Promise<string[]> {
  const { nodes } = (await ironicRequest(ironic.url, "GET", "/v1/nodes?fields=uuid,name&limit=1000")) as {
    nodes: { uuid: string; name: string | null }[];
  };
  return nodes.filter((n) => n.name === name).map((n) => n.uuid);
}

describe("Ironic activities", () => {
  it(
    "ironicEnroll creates the node and brings it to manageable, heartbeating while it waits; again, it returns the same node",
    async () => {
      const acts = activities();
      const d = plan();
      const { result: uuid, heartbeats } = await run(acts.ironicEnroll, d);
      expect(await getNode(ironic.url, uuid)).toMatchObject({
        name: d.name,
        driver: "fake-hardware",
        resource_class: "GPU_COMPUTE",
        provision_state: "manageable",
        target_provision_state: null,
        extra: { fleet_manager_device_id: d.deviceId },
      });
      expect(heartbeats.length).toBeGreaterThan(0);
      expect(heartbeats.at(-1)).toEqual({ provisionState: "manageable", target: null });

      // A retry (the first answer was lost): the same node, and still only one of that name.
      expect((await run(acts.ironicEnroll, d)).result).toBe(uuid);
      expect((await run(acts.ironicEnroll, { ...d, ironicNodeUuid: uuid })).result).toBe(uuid);
      expect(await ironicNodesNamed(d.name)).toEqual([uuid]);
    },
    WAITING,
  );

  it(
    "ironicEnroll gives new nodes the site's IPA deploy kernel and ramdisk, and adds them to a node left in enroll",
    async () => {
      const deployImages = { kernel: randomUUID(), ramdisk: randomUUID() };
      const acts = activities({ deployImages });
      const d = plan();
      const { result: uuid } = await run(acts.ironicEnroll, d);
      expect((await getNode(ironic.url, uuid)).driver_info).toMatchObject({
        deploy_kernel: deployImages.kernel,
        deploy_ramdisk: deployImages.ramdisk,
      });
      const left = plan();
      await createNode(ironic.url, { name: left.name, extra: { fleet_manager_device_id: left.deviceId } });
      const { result: adopted } = await run(acts.ironicEnroll, left);
      expect((await getNode(ironic.url, adopted)).driver_info).toMatchObject({
        deploy_kernel: deployImages.kernel,
        deploy_ramdisk: deployImages.ramdisk,
      });
      // Without them configured, the worker sets neither.
      const plain = plan();
      const { result: bare } = await run(activities().ironicEnroll, plain);
      expect((await getNode(ironic.url, bare)).driver_info).not.toHaveProperty("deploy_kernel");
    },
    WAITING,
  );

  it(
    "ironicEnroll adopts the node a lost create left behind (still enroll) and manages it, creating no other",
    async () => {
      const d = plan();
      const left = await createNode(ironic.url, { name: d.name, extra: { fleet_manager_device_id: d.deviceId } });
      expect(left.provision_state).toBe("enroll");
      const { result: uuid } = await run(activities().ironicEnroll, d);
      expect(uuid).toBe(left.uuid);
      expect((await getNode(ironic.url, uuid)).provision_state).toBe("manageable");
      expect(await ironicNodesNamed(d.name)).toEqual([uuid]);
    },
    WAITING,
  );

  it("ironicEnroll refuses a node of that name that belongs to another device, leaving it alone", async () => {
    const d = plan();
    const other = await createNode(ironic.url, { name: d.name, extra: { fleet_manager_device_id: randomUUID() } });
    expectFinal(
      await rejection(run(activities().ironicEnroll, d)),
      "BadInput",
      /belongs to another Fleet Manager device/,
    );
    expect(await getNode(ironic.url, other.uuid)).toMatchObject({ provision_state: "enroll", extra: other.extra });
    expect(await ironicNodesNamed(d.name)).toEqual([other.uuid]);
  });

  it("refuses a device without an Ironic instance (BadInput) and one whose instance this worker lacks (NotConfigured)", async () => {
    expectFinal(
      await rejection(run(activities().ironicEnroll, plan({ ironicInstance: null }))),
      "BadInput",
      /no device role that maps to an Ironic instance/,
    );
    expectFinal(
      await rejection(run(activities().ironicEnroll, plan({ ironicInstance: "undercloud" }))),
      "NotConfigured",
      /no undercloud Ironic configured/,
    );
  });

  it(
    "ironicInspect inspects once, configureBmc sets driver_info and validates, ironicProvide reaches available once",
    async () => {
      const acts = activities();
      const d = plan();
      const uuid = (await run(acts.ironicEnroll, d)).result;
      const enrolled = { ...d, ironicNodeUuid: uuid };
      expect((await getNode(ironic.url, uuid)).inspection_finished_at).toBeNull();

      await run(acts.ironicInspect, enrolled);
      const inspected = await getNode(ironic.url, uuid);
      expect(inspected).toMatchObject({
        provision_state: "manageable",
        target_provision_state: null,
        last_error: null,
      });
      expect(inspected.inspection_finished_at).toEqual(expect.any(String));
      await run(acts.ironicInspect, enrolled);
      expect((await getNode(ironic.url, uuid)).inspection_finished_at).toBe(inspected.inspection_finished_at);

      await run(acts.configureBmc, enrolled);
      const configured = await getNode(ironic.url, uuid);
      expect(configured.driver_info).toMatchObject({ bmc_address: d.bmcAddress });
      const validation = (await ironicRequest(ironic.url, "GET", `/v1/nodes/${uuid}/validate`)) as Record<
        string,
        { result: boolean | null }
      >;
      expect(validation.power?.result).toBe(true);
      expect(validation.management?.result).toBe(true);
      await run(acts.configureBmc, enrolled); // the same address: nothing to patch
      expect((await getNode(ironic.url, uuid)).updated_at).toBe(configured.updated_at);

      const { heartbeats } = await run(acts.ironicProvide, enrolled);
      const provided = await getNode(ironic.url, uuid);
      expect(provided).toMatchObject({
        provision_state: "available",
        target_provision_state: null,
        maintenance: false,
      });
      expect(heartbeats.at(-1)).toEqual({ provisionState: "available", target: null });
      await run(acts.ironicProvide, enrolled);
      expect((await getNode(ironic.url, uuid)).provision_updated_at).toBe(provided.provision_updated_at);
    },
    WAITING,
  );

  it(
    "a node whose cleaning failed makes ironicProvide fail for good, with Ironic's last_error",
    async () => {
      const acts = activities();
      const d = plan();
      const uuid = (await run(acts.ironicEnroll, d)).result;
      const failed = await failClean(ironic.url, uuid);
      const f = expectFinal(
        await rejection(run(acts.ironicProvide, { ...d, ironicNodeUuid: uuid })),
        "SourceRejected",
        /clean failed/,
      );
      expect(f.message).toContain(failed.last_error!);
      // Nothing was asked of the node.
      expect(await getNode(ironic.url, uuid)).toMatchObject({
        provision_state: "clean failed",
        provision_updated_at: failed.provision_updated_at,
      });
    },
    WAITING,
  );

  it("an Ironic that does not answer is thrown as a retryable error", async () => {
    const dead = await deadEndpoint();
    const acts = activities({
      ironic: { overcloud: new IronicClient({ endpoint: dead, maxAttempts: 2, backoffMs: 5 }) },
    });
    const d = plan();
    expectRetryable(await rejection(run(acts.ironicEnroll, d)), "IronicUnavailableError");
    expectRetryable(await rejection(run(acts.ironicProvide, d)), "IronicUnavailableError");
  });

  it(
    "ironicMaintenance sets the repair's reason once; another reason is left; ironicEndMaintenance clears only its own",
    async () => {
      const acts = activities();
      const reason = "fleet-manager repair OPS-7: GPU 3 fell off the bus";
      const none = plan();
      expect((await run(acts.ironicMaintenance, none, reason)).result).toBe(`${none.name}: no Ironic node`);

      const d = plan();
      const uuid = (await run(acts.ironicEnroll, d)).result;
      expect((await run(acts.ironicMaintenance, d, reason)).result).toBe(`${d.name}: maintenance`);
      const set = await getNode(ironic.url, uuid);
      expect(set).toMatchObject({ maintenance: true, maintenance_reason: reason });
      await run(acts.ironicMaintenance, d, reason); // a retry writes nothing
      expect((await getNode(ironic.url, uuid)).updated_at).toBe(set.updated_at);
      await run(acts.ironicEndMaintenance, d, reason);
      expect(await getNode(ironic.url, uuid)).toMatchObject({ maintenance: false, maintenance_reason: null });

      // An operator's (or a failed clean's) maintenance says more than ours: kept through both.
      await ironicRequest(ironic.url, "PUT", `/v1/nodes/${uuid}/maintenance`, { reason: "PSU 2 smoking" });
      expect((await run(acts.ironicMaintenance, d, reason)).result).toBe(
        `${d.name}: already in maintenance (PSU 2 smoking), left as it is`,
      );
      await run(acts.ironicEndMaintenance, d, reason);
      expect(await getNode(ironic.url, uuid)).toMatchObject({ maintenance: true, maintenance_reason: "PSU 2 smoking" });
    },
    WAITING,
  );
});
