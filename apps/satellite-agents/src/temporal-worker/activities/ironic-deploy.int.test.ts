/**
 * IMAGE_NODE's deploy under Temporal's MockActivityEnvironment against a real Ironic
 * (fake-hardware, whose fake deploy interface takes the same requests as direct deploy and
 * moves the node through Ironic's real deploy states). Assertions read the nodes back with raw
 * Ironic HTTP.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient } from "@fm/clients";
import {
  createNode,
  getNode,
  ironicRequest,
  setProvisionState,
  startIronic,
  waitForProvisionState,
  type IronicPeer,
} from "@fm/test-support/ironic";
import { WAITING, expectFinal, plan, rejection, run } from "./activity-testing.ts";
import { deployActivities } from "./ironic-deploy.ts";

let ironic: IronicPeer;
beforeAll(async () => {
  ironic = await startIronic();
}, 120_000);
afterAll(() => ironic?.stop(), 60_000);

const acts = () =>
  deployActivities({
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    pollIntervalMs: 100,
  });

/** A node driven to `state` through Ironic's real transitions. */
async function nodeIn(state: "manageable" | "available") {
  const p = plan();
  const node = await createNode(ironic.url, { name: p.name });
  await setProvisionState(ironic.url, node.uuid, "manage");
  await waitForProvisionState(ironic.url, node.uuid, "manageable");
  if (state === "available") {
    await setProvisionState(ironic.url, node.uuid, "provide");
    await waitForProvisionState(ironic.url, node.uuid, "available");
  }
  return { ...p, ironicNodeUuid: node.uuid };
}

const IMAGE = "http://images.example/ubuntu-24.04-gpu.qcow2";
const HASH = { algo: "sha256", value: "AB".repeat(32) };

describe("ironicDeploy", () => {
  it(
    "deploys the image onto an available node with its user data in a config drive, until active; a retry of the job deploys nothing again",
    async () => {
      const d = await nodeIn("available");
      const marker = randomUUID();
      await run(acts().ironicDeploy, d, { image: IMAGE, osHash: HASH, userData: "#cloud-config\n", marker });
      const node = await getNode(ironic.url, d.ironicNodeUuid);
      expect(node).toMatchObject({
        provision_state: "active",
        target_provision_state: null,
        instance_info: {
          image_source: IMAGE,
          image_os_hash_algo: "sha256",
          image_os_hash_value: "ab".repeat(32),
          configdrive: "******", // Ironic built it and keeps it masked
        },
        extra: { fleet_manager_deploy: { by: marker } },
      });

      await run(acts().ironicDeploy, d, { image: IMAGE, osHash: HASH, userData: "#cloud-config\n", marker });
      expect((await getNode(ironic.url, d.ironicNodeUuid)).provision_updated_at).toBe(node.provision_updated_at);
    },
    WAITING,
  );

  it(
    "a Glance image replaces the digest a previous deploy left, and without user data no config drive is built",
    async () => {
      const d = await nodeIn("available");
      await ironicRequest(ironic.url, "PATCH", `/v1/nodes/${d.ironicNodeUuid}`, [
        { op: "add", path: "/instance_info", value: { image_source: IMAGE, image_checksum: "0".repeat(32) } },
      ]);
      const glance = randomUUID();
      await run(acts().ironicDeploy, d, { image: glance, marker: randomUUID() });
      const info = (await getNode(ironic.url, d.ironicNodeUuid)) as unknown as {
        instance_info: object;
        provision_state: string;
      };
      expect(info.provision_state).toBe("active");
      expect(info.instance_info).toMatchObject({ image_source: glance });
      expect(info.instance_info).not.toHaveProperty("image_checksum");
      expect(info.instance_info).not.toHaveProperty("configdrive");
    },
    WAITING,
  );

  it(
    "refuses a node that is not available, and one another job deployed, touching neither",
    async () => {
      const manageable = await nodeIn("manageable");
      expectFinal(
        await rejection(run(acts().ironicDeploy, manageable, { image: IMAGE, osHash: HASH, marker: randomUUID() })),
        "BadInput",
        `${manageable.name} is not available to deploy an image on (Ironic manageable)`,
      );
      expect((await getNode(ironic.url, manageable.ironicNodeUuid)).provision_state).toBe("manageable");

      const deployed = await nodeIn("available");
      await run(acts().ironicDeploy, deployed, { image: IMAGE, osHash: HASH, marker: randomUUID() });
      const before = await getNode(ironic.url, deployed.ironicNodeUuid);
      expectFinal(
        await rejection(run(acts().ironicDeploy, deployed, { image: IMAGE, osHash: HASH, marker: randomUUID() })),
        "BadInput",
        /is not available to deploy an image on \(Ironic active\)/,
      );
      expect((await getNode(ironic.url, deployed.ironicNodeUuid)).provision_updated_at).toBe(
        before.provision_updated_at,
      );
    },
    WAITING,
  );

  it(
    "never writes a file:// or other non-http image into the node, even from a job the hub did not check (final, BadInput)",
    async () => {
      const d = await nodeIn("available");
      const before = await getNode(ironic.url, d.ironicNodeUuid);
      for (const image of ["file:///etc/ironic/ironic.conf", "gopher://169.254.169.254/_x", "/etc/passwd"])
        expectFinal(
          await rejection(run(acts().ironicDeploy, d, { image, osHash: HASH, marker: randomUUID() })),
          "BadInput",
          new RegExp(`^${d.name}: image `),
        );
      expectFinal(
        await rejection(run(acts().ironicDeploy, d, { image: IMAGE, marker: randomUUID() })),
        "BadInput",
        `${d.name}: an image URL needs its digest`,
      );
      const after = await getNode(ironic.url, d.ironicNodeUuid);
      expect(after.instance_info).toEqual(before.instance_info);
      expect(after.provision_state).toBe("available");
    },
    WAITING,
  );
});
