/**
 * SLURM adoption end to end, every part a process: the hub, the NetBox test server, a real Ironic
 * (fake-hardware), a real SLURM whose adopted nodes have no slurmd until their server boots, a
 * real Temporal, the netbox agent, workflow agent and Temporal worker, and Nova: the Nova test
 * server behind the Keystone stand-in, deploying servers on the real Ironic. A booted server does
 * what a SLURM compute image's cloud-init does: it starts its node's slurmd, which registers with
 * the real slurmctld.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, Connection } from "@temporalio/client";
import type { Device, Job } from "@fm/domain";
import { appCredentialCloud, startKeystoneServer, type KeystoneServer } from "@fm/clients/testing/keystone-server";
import { getNode, setMaintenance } from "@fm/test-support/ironic";
import { NO_VALID_HOST, startNovaServer, type NovaTestServer } from "@fm/test-support/nova";
import { scontrolNode, setNodeState, startNodeDaemon } from "@fm/test-support/slurm";
import { SITE, startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";

const IMAGE = "6b5f2d1c-8f3e-4a57-9a3b-0c1d2e3f4a5b";
const NETWORK = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
const KEYPAIR = "sys3-iad1-keypair";
const USER_DATA = Buffer.from("#cloud-config\nruncmd:\n  - systemctl start slurmd\n").toString("base64");

let s: JobsStack;
let keystone: KeystoneServer;
let nova: NovaTestServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "slurm-adopt-"));
  keystone = await startKeystoneServer({ projects: [{ id: "231c62fb", name: "site-kef", domain_id: "default" }] });
  s = await startJobsStack({
    stagedDevices: 2,
    // gpu001 and gpu002 are configured in slurm.conf but their slurmd only starts when their server boots.
    slurmNodes: 2,
    slurmStandbyNodes: 2,
    workerEnv: async ({ ironic }) => {
      nova = await startNovaServer({
        ironicUrl: ironic.url,
        images: [{ id: IMAGE, name: "slurm-compute-x86_64" }],
        flavors: [
          {
            id: "42",
            name: "gpu.baremetal",
            vcpus: 96,
            ram: 1_048_576,
            disk: 800,
            extraSpecs: { "resources:CUSTOM_GPU_COMPUTE": "1" },
          },
        ],
        keypairs: [KEYPAIR],
        networks: [{ id: NETWORK, name: "slurm-provider" }],
        pollMs: 100,
      });
      keystone.computeUrl = nova.root;
      const clouds = join(dir, "openstack-slurm.yaml");
      await writeFile(clouds, appCredentialCloud(keystone.url));
      return {
        OPENSTACK_SLURM_CLOUDS_FILE: clouds,
        OPENSTACK_SLURM_PROJECT_NAME: "site-kef",
        OPENSTACK_SLURM_NETWORK: NETWORK,
        OPENSTACK_SLURM_KEY_NAME: KEYPAIR,
        FM_SLURM_REGISTER_TIMEOUT_S: "60",
      };
    },
  });
  // A booted server's cloud-init starts its slurmd; the node is named after the server.
  nova.setOnActive((server) => startNodeDaemon(s.slurm!, server.name));
  // New nodes wait drained until Fleet Manager resumes them.
  for (const node of s.slurm!.nodes) await setNodeState(s.slurm!, node, "drain", "awaiting adoption");
}, 240_000);
afterAll(async () => {
  await s?.stop();
  await nova?.close();
  await keystone?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 120_000);

const enrolled = async (d: Device): Promise<void> => {
  const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
  expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
};
const bootstrapConfig = async (roleId: string) => {
  const res = await s.api("POST", `/api/v1/sites/${s.siteId}/slurm-bootstrap-configs/`, {
    deviceRoleId: roleId,
    image: IMAGE,
    flavor: "gpu.baremetal",
    gres: "gpu:8",
    userData: USER_DATA,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
/** Every payload of a workflow history, decoded (payload data are bytes: JSON.stringify would hide them). */
const payloadText = (v: unknown): string => {
  if (v instanceof Uint8Array) return Buffer.from(v).toString("utf8");
  if (Array.isArray(v)) return v.map(payloadText).join("\n");
  if (v && typeof v === "object") return Object.values(v).map(payloadText).join("\n");
  return typeof v === "string" ? v : "";
};
const steps = (job: Job) => job.steps.map((x) => `${x.name}:${x.status}`);

describe("SLURM_ADOPT", () => {
  it("boots a Nova server on the device's Ironic node and resumes its SLURM node once it registers", async () => {
    const [d] = s.staged;
    await enrolled(d!);
    await bootstrapConfig(d!.role!.id);
    // Configured, drained, no slurmd yet (slurmctld adds NOT_RESPONDING after a while).
    expect((await scontrolNode(s.slurm!, "gpu001")).state).toMatch(/^UNKNOWN\+DRAIN/);

    const job = await s.runJob({ kind: "SLURM_ADOPT", deviceIds: [d!.id] }, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(steps(job)).toEqual([
      "preflight:SUCCEEDED",
      "nova-boot:SUCCEEDED",
      "slurm-register:SUCCEEDED",
      "slurm-resume:SUCCEEDED",
      "hub-record:SUCCEEDED",
    ]);

    // Nova: one server, named after the SLURM node, built from the bootstrap config, on this node.
    const servers = [...nova.servers.values()].filter((x) => x.name === "gpu001");
    expect(servers).toHaveLength(1);
    const server = servers[0]!;
    expect(server).toMatchObject({
      status: "ACTIVE",
      imageId: IMAGE,
      flavor: { id: "42" },
      keyName: KEYPAIR,
      networkId: NETWORK,
      userData: USER_DATA,
      metadata: { fleet_manager_device: d!.id, fleet_manager_job: job.id, slurm_gres: "gpu:8" },
    });
    // Every Nova call carried a Keystone token, at the pinned microversion.
    expect(keystone.computeCalls.length).toBeGreaterThan(0);
    expect(keystone.computeCalls.every((c) => c.token?.startsWith("gAAAAAB"))).toBe(true);
    expect(new Set(nova.requests.map((r) => r.version))).toEqual(new Set(["2.74"]));

    // Ironic: the node was deployed by Nova's driver for that server.
    const node = await getNode(s.ironic.url, server.nodeUuid!);
    expect(node).toMatchObject({ name: d!.name, provision_state: "active", instance_uuid: server.id });
    // SLURM: the node registered and was resumed, drain reason gone.
    expect(await scontrolNode(s.slurm!, "gpu001")).toEqual({ state: "IDLE", reason: null });
    // The hub recorded what Ironic shows now.
    const hubDevice = (await s.api<Device>("GET", `/api/v1/devices/${d!.id}/`)).body;
    expect(hubDevice.ironic.provisionState).toBe("active");

    // The bootstrap config's user data went from the hub to Nova inside the activity: the
    // workflow's history never held it.
    const connection = await Connection.connect({ address: s.temporal.address });
    try {
      const history = await new Client({ connection }).workflow.getHandle(job.id).fetchHistory();
      const text = payloadText(history);
      // The activities' inputs and results are there, decoded (the device plan names the device).
      expect(text).toContain(`"name":"${d!.name}"`);
      for (const secret of [USER_DATA, "systemctl start slurmd", Buffer.from(USER_DATA).toString("base64")])
        expect(text).not.toContain(secret);
    } finally {
      await connection.close();
    }

    // Adopting it again is refused: the node is no longer available for Nova.
    const again = await s.api("POST", "/api/v1/jobs/", { kind: "SLURM_ADOPT", deviceIds: [d!.id] });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/must be available in Ironic/);
  });

  it("a Nova fault fails the job with Nova's message, and gives the node back", async () => {
    const d = s.staged[1]!;
    await enrolled(d);
    const hubNode = (await s.api<Device>("GET", `/api/v1/devices/${d.id}/`)).body.ironic.nodeUuid!;
    // Ironic puts the node in maintenance behind the hub's back: Nova's scheduler will not place a server on it.
    await setMaintenance(s.ironic.url, hubNode, "PSU alarm");

    const job = await s.runJob({ kind: "SLURM_ADOPT", deviceIds: [d.id] }, 120_000);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatchObject({ step: "nova-boot" });
    expect(job.error!.message).toContain(`Nova server gpu002 failed: ${NO_VALID_HOST}`);
    expect(steps(job)).toEqual([
      "preflight:SUCCEEDED",
      "nova-boot:FAILED",
      "slurm-register:PENDING",
      "slurm-resume:PENDING",
      "hub-record:PENDING",
    ]);
    // The failed server is gone from Nova, the node holds no instance, and SLURM never saw the node.
    expect([...nova.servers.values()].filter((x) => x.name === "gpu002")).toEqual([]);
    expect(await getNode(s.ironic.url, hubNode)).toMatchObject({ provision_state: "available", instance_uuid: null });
    expect((await scontrolNode(s.slurm!, "gpu002")).state).toMatch(/^UNKNOWN\+DRAIN/);
  });

  it("is refused at a site where SLURM is not reached through OpenStack, and RELEASE skips its SLURM step there", async () => {
    const site = (await s.api<{ version: number }>("GET", `/api/v1/sites/${s.siteId}/`)).body;
    const patch = await fetch(`${s.hub.url}/api/v1/sites/${s.siteId}/`, {
      method: "PATCH",
      headers: {
        authorization: `Bearer ${s.admin}`,
        "content-type": "application/json",
        "if-match": `"${s.siteId}.${site.version}"`,
      },
      body: JSON.stringify({ openstackSlurmEnabled: false }),
    });
    expect(patch.status).toBe(200);
    const refused = await s.api("POST", "/api/v1/jobs/", { kind: "SLURM_ADOPT", deviceIds: [s.staged[1]!.id] });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "site_state_conflict" });
    // RELEASE follows the same flag: its SLURM step is skipped, only the Ironic node is checked.
    const release = await s.runJob({ kind: "RELEASE", deviceIds: [s.staged[0]!.id] });
    expect(release.status, JSON.stringify(release.error)).toBe("SUCCEEDED");
    expect(steps(release)).toEqual([
      "preflight:SUCCEEDED",
      "slurm-check:SKIPPED",
      "ironic-check:SUCCEEDED",
      "hand-back:SUCCEEDED",
    ]);
    expect(release.steps[1]!.message).toBe(`SLURM is not reached through OpenStack at ${SITE}`);
  });
});
