/**
 * The Nova client against the Nova test server (fronted by the Keystone stand-in, as nova-api is by
 * keystonemiddleware), which deploys the servers on a real Ironic.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAvailableNode, getNode, setMaintenance, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { NO_VALID_HOST, startNovaServer, type NovaTestServer } from "@fm/test-support/nova";
import { eventually } from "@fm/test-support/wait";
import { loadCloud, novaClientFor } from "../openstack/index.ts";
import { appCredentialCloud, startKeystoneServer, type KeystoneServer } from "../testing/keystone-server.ts";
import { NovaApiError, type NovaClient, type NovaServer } from "./nova-client.ts";

const IMAGE = "6b5f2d1c-8f3e-4a57-9a3b-0c1d2e3f4a5b";
const NETWORK = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
let ironic: IronicPeer;
let keystone: KeystoneServer;
let nova: NovaTestServer;
let client: NovaClient;
let dir: string;

beforeAll(async () => {
  [ironic, keystone, dir] = await Promise.all([startIronic(), startKeystoneServer(), mkdtemp(join(tmpdir(), "nova-"))]);
  nova = await startNovaServer({
    ironicUrl: ironic.url,
    images: [{ id: IMAGE, name: "slurm-compute-arm64" }],
    flavors: [
      {
        id: "7",
        name: "gpu.baremetal",
        vcpus: 96,
        ram: 1_048_576,
        disk: 800,
        extraSpecs: { "resources:CUSTOM_GPU_COMPUTE": "1" },
      },
    ],
    keypairs: ["sys1-ice2-keypair"],
    networks: [{ id: NETWORK, name: "slurm-provider" }],
    pollMs: 50,
  });
  keystone.computeUrl = nova.root;
  const file = join(dir, "clouds.yaml");
  await writeFile(file, appCredentialCloud(keystone.url));
  const made = await novaClientFor(loadCloud(file), { backoffMs: 10 });
  client = made.nova;
  expect(made.project).toEqual({ id: "231c62fb", name: "site-kef" });
}, 60_000);
afterAll(async () => {
  await nova?.close();
  await keystone?.close();
  await ironic?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const spec = (name: string, node: string) => ({
  name,
  imageRef: IMAGE,
  flavorRef: "7",
  keyName: "sys1-ice2-keypair",
  networkId: NETWORK,
  userData: Buffer.from("#cloud-config\nhostname: x\n").toString("base64"),
  hypervisorHostname: node,
  metadata: { fleet_manager_device: name },
});

const settled = (id: string) =>
  eventually(async () => {
    const s = await client.server(id);
    if (!s || s.status === "BUILD") throw new Error(`server ${id} still ${s?.status ?? "missing"}`);
    return s;
  }, 60_000);

describe("the Nova client", () => {
  it("creates a server on the named Ironic node, which Nova's driver deploys to active", async () => {
    const node = await createAvailableNode(ironic.url, { name: "adopt-1" });
    const id = await client.createServer(spec("gpu101", node.uuid));
    const server: NovaServer = await settled(id);
    expect(server).toMatchObject({
      id,
      name: "gpu101",
      status: "ACTIVE",
      key_name: "sys1-ice2-keypair",
      metadata: { fleet_manager_device: "gpu101" },
      "OS-EXT-SRV-ATTR:hypervisor_hostname": node.uuid,
    });
    const deployed = await getNode(ironic.url, node.uuid);
    expect(deployed).toMatchObject({ provision_state: "active", instance_uuid: id });
    expect(deployed.instance_info).toMatchObject({ image_source: IMAGE, display_name: "gpu101" });

    // Every request went through Keystone with a token, at the pinned microversion.
    expect(keystone.computeCalls.every((c) => c.token?.startsWith("gAAAAAB"))).toBe(true);
    expect(new Set(nova.requests.map((r) => r.version))).toEqual(new Set(["2.74"]));

    // The name filter is a regular expression in Nova: an exact name does not match its prefix's servers.
    expect((await client.serversNamed("gpu101")).map((s) => s.id)).toEqual([id]);
    expect(await client.serversNamed("gpu10")).toEqual([]);
    expect(await client.serversNamed("gpu1.1")).toEqual([]);

    await client.deleteServer(id);
    await eventually(async () => {
      if (await client.server(id)) throw new Error("server still there");
    }, 60_000);
    const back = await getNode(ironic.url, node.uuid);
    expect(back).toMatchObject({ provision_state: "available", instance_uuid: null });
    // Deleting again: Nova no longer knows it, which is what was wanted.
    await client.deleteServer(id);
  });

  it("a locked server is not deleted: Nova's 409 conflictingRequest, typed", async () => {
    const node = await createAvailableNode(ironic.url, { name: "adopt-3" });
    const id = await client.createServer(spec("gpu104", node.uuid));
    await settled(id);
    const lock = await fetch(`${nova.url}/servers/${id}/action`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ lock: null }),
    });
    expect(lock.status).toBe(202);
    const refused = await client.deleteServer(id).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 409,
      fault: "conflictingRequest",
      message: expect.stringContaining(`Instance ${id} is locked`),
    });
    expect((await client.server(id))?.status).toBe("ACTIVE");
  });

  it("a node in maintenance is no valid host: the server ends in ERROR with Nova's fault", async () => {
    const node = await createAvailableNode(ironic.url, { name: "adopt-2" });
    await setMaintenance(ironic.url, node.uuid, "bad DIMM");
    const server = await settled(await client.createServer(spec("gpu102", node.uuid)));
    expect(server).toMatchObject({ status: "ERROR", fault: { code: 500, message: NO_VALID_HOST } });
    expect((await getNode(ironic.url, node.uuid)).instance_uuid).toBeNull();
  });

  it("says what Nova refused, with the fault's name, and reads a missing server as null", async () => {
    const refused = await client
      .createServer({ ...spec("gpu103", "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"), flavorRef: "nope" })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NovaApiError);
    expect(refused).toMatchObject({
      status: 400,
      fault: "badRequest",
      message: expect.stringContaining("Flavor nope could not be found."),
    });
    const badKey = await client
      .createServer({ ...spec("gpu103", "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"), keyName: "other" })
      .catch((e: unknown) => e);
    expect(badKey).toMatchObject({ status: 400, message: expect.stringContaining("Invalid key_name provided.") });
    expect(await client.server("5d0c4b8e-0000-4000-8000-000000000000")).toBeNull();
    expect(await client.flavorId("gpu.baremetal")).toBe("7");
    expect(await client.flavorId("7")).toBe("7");
    expect(await client.flavorId("m1.tiny")).toBeNull();
  });
});

describe("the Nova test server's wire format", () => {
  it("echoes the microversion asked for, refuses one out of range (406) or malformed (400), and 2.73 has no hypervisor_hostname", async () => {
    const get = (headers: Record<string, string>) => fetch(`${nova.url}/flavors`, { headers });
    const legacy = await get({ "x-openstack-nova-api-version": "2.60" });
    expect(legacy.headers.get("openstack-api-version")).toBe("compute 2.60");
    expect(legacy.headers.get("x-openstack-nova-api-version")).toBe("2.60");
    expect((await get({})).headers.get("openstack-api-version")).toBe("compute 2.1");
    const tooNew = await get({ "openstack-api-version": "compute 3.0" });
    expect(tooNew.status).toBe(406);
    expect(await tooNew.json()).toEqual({
      computeFault: {
        code: 406,
        message: "Version 3.0 is not supported by the API. Minimum is 2.1 and maximum is 2.95.",
      },
    });
    expect((await get({ "openstack-api-version": "compute two" })).status).toBe(400);
    const old = await fetch(`${nova.url}/servers`, {
      method: "POST",
      headers: { "content-type": "application/json", "openstack-api-version": "compute 2.73" },
      body: JSON.stringify({
        server: { name: "x", imageRef: IMAGE, flavorRef: "7", networks: [{ uuid: NETWORK }], hypervisor_hostname: "n" },
      }),
    });
    expect(old.status).toBe(400);
    expect(await old.json()).toEqual({
      badRequest: {
        code: 400,
        message: "Additional properties are not allowed ('hypervisor_hostname' was unexpected)",
      },
    });
    const missing = await fetch(`${nova.url}/servers/nope`);
    expect(await missing.json()).toEqual({ itemNotFound: { code: 404, message: "Instance nope could not be found." } });
  });
});
