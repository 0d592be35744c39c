/**
 * SLURM adoption's Nova activity under MockActivityEnvironment, against the Nova test server
 * (behind the Keystone stand-in) deploying on a real Ironic: what an attempt after a worker died
 * finds, and a server of the name that Fleet Manager did not make. Neither path reads the hub,
 * which points at a port nothing listens on (a read would fail the test).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HubClient, IronicClient, loadCloud, novaClientFor, type NovaClient } from "@fm/clients";
import { appCredentialCloud, startKeystoneServer, type KeystoneServer } from "@fm/clients/testing/keystone-server";
import { createAvailableNode, getNode, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { startNovaServer, type NovaTestServer } from "@fm/test-support/nova";
import { WAITING, deadEndpoint, expectFinal, plan, rejection, run } from "./activity-testing.ts";
import { DEVICE_METADATA, novaActivities } from "./nova.ts";

const IMAGE = "6b5f2d1c-8f3e-4a57-9a3b-0c1d2e3f4a5b";
const NETWORK = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
let ironic: IronicPeer;
let keystone: KeystoneServer;
let novaServer: NovaTestServer;
let nova: NovaClient;
let acts: ReturnType<typeof novaActivities>;
let dir: string;

beforeAll(async () => {
  [ironic, keystone, dir] = await Promise.all([
    startIronic(),
    startKeystoneServer(),
    mkdtemp(join(tmpdir(), "nova-act-")),
  ]);
  novaServer = await startNovaServer({
    ironicUrl: ironic.url,
    images: [{ id: IMAGE, name: "slurm-compute" }],
    flavors: [{ id: "7", name: "gpu.baremetal", vcpus: 8, ram: 65_536, disk: 100, extraSpecs: {} }],
    keypairs: ["iad1-keypair"],
    networks: [{ id: NETWORK, name: "slurm-provider" }],
    pollMs: 50,
  });
  keystone.computeUrl = novaServer.root;
  const clouds = join(dir, "clouds.yaml");
  await writeFile(clouds, appCredentialCloud(keystone.url));
  nova = (await novaClientFor(loadCloud(clouds), { backoffMs: 10 })).nova;
  acts = novaActivities({
    site: "iad1",
    hub: new HubClient({ baseUrl: await deadEndpoint(), maxAttempts: 1 }),
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    nova,
    slurmAdoption: { networkId: NETWORK, keyName: "iad1-keypair", registerTimeoutMs: 60_000 },
    slurmDeviceNamePrefix: "",
    pollIntervalMs: 100,
  });
}, 120_000);
afterAll(async () => {
  await novaServer?.close();
  await keystone?.close();
  await ironic?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const serverFor = (name: string, node: string, device: string) =>
  nova.createServer({
    name,
    imageRef: IMAGE,
    flavorRef: "7",
    keyName: "iad1-keypair",
    networkId: NETWORK,
    hypervisorHostname: node,
    metadata: { [DEVICE_METADATA]: device },
  });

describe("novaBootSlurmNode", () => {
  it(
    "takes up the server an earlier attempt made for the device, and waits for it to be ACTIVE",
    async () => {
      const d = plan();
      const node = await createAvailableNode(ironic.url, { name: d.name });
      const earlier = await serverFor(d.name, node.uuid, d.deviceId);
      const { result, heartbeats } = await run(acts.novaBootSlurmNode, d, { jobId: "job-1" });
      expect(result).toEqual({ serverId: earlier, nodeUuid: node.uuid, server: d.name });
      expect([...novaServer.servers.values()].filter((s) => s.name === d.name)).toHaveLength(1);
      expect(await getNode(ironic.url, node.uuid)).toMatchObject({ provision_state: "active", instance_uuid: earlier });
      expect(heartbeats.length).toBeGreaterThan(0);
    },
    WAITING,
  );

  it(
    "refuses a server of the node's name that Fleet Manager did not make for this device",
    async () => {
      const d = plan();
      const node = await createAvailableNode(ironic.url, { name: d.name });
      const stranger = await serverFor(d.name, node.uuid, "someone-else");
      expectFinal(
        await rejection(run(acts.novaBootSlurmNode, d, { jobId: "job-2" })),
        "BadInput",
        new RegExp(`Nova already has a server named ${d.name} \\(${stranger}\\) that Fleet Manager did not make`),
      );
      // Nothing was made or deleted.
      expect([...novaServer.servers.values()].filter((s) => s.name === d.name).map((s) => s.id)).toEqual([stranger]);
    },
    WAITING,
  );
});
