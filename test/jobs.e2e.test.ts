/**
 * Jobs end to end, every part a process on real HTTP and gRPC: the hub on PostgreSQL, the
 * NetBox test server, a real Ironic (fake-hardware), a real SLURM through slurmrestd, a real
 * Temporal dev server, and the site's netbox agent, workflow agent and Temporal worker.
 * Asserted: what the hub's API, Ironic, NetBox, SLURM and Temporal show afterwards.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, Connection } from "@temporalio/client";
import type { Device, Job } from "@fm/domain";
import { JOB_WORKFLOWS, taskQueueFor, workflowInputOf } from "@fm/domain/workflows";
import { createNode, getNode, ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { scontrolJob, setNodeState, slurmCommand } from "@fm/test-support/slurm";
import { SITE, startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import { startAgent } from "@fm/test-support/agents";
import { eventually } from "@fm/test-support/wait";

let s: JobsStack;
let temporal: Client;
let connection: Connection;

/** Staged devices whose names are SLURM nodes (burn-in, release); the others are not. */
const SLURM_BACKED = 5;
const PLAIN = 9;

beforeAll(async () => {
  s = await startJobsStack({
    stagedDevices: SLURM_BACKED + PLAIN,
    slurmNodes: SLURM_BACKED,
    burnInCommand: 'sleep $((FM_BURNIN_DURATION_S / 30)); echo "burn-in of $FM_DEVICE done"',
  });
  connection = await Connection.connect({ address: s.temporal.address });
  temporal = new Client({ connection, namespace: "default" });
}, 240_000);
afterAll(async () => {
  await connection?.close();
  await s?.stop();
}, 120_000);

const used = { slurm: 0, plain: 0 };
/** A staged device no other test uses: one of the SLURM-backed ones, or of the others. */
const fresh = (o: { slurm?: boolean } = {}): Device => {
  const d = o.slurm ? used.slurm++ < SLURM_BACKED && s.staged[used.slurm - 1] : s.staged[SLURM_BACKED + used.plain++];
  if (!d) throw new Error("no staged device left: raise SLURM_BACKED or PLAIN");
  return d;
};
/** The device, enrolled (ENROL ended SUCCEEDED). */
const enrolled = async (d: Device): Promise<Device> => {
  const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
  expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
  return d;
};

const ironicNodesNamed = async (name: string) =>
  ((await ironicRequest(s.ironic.url, "GET", "/v1/nodes?detail=true")) as { nodes: RawIronicNode[] }).nodes.filter(
    (n) => n.name === name,
  );
const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;
const netboxDevice = (name: string) => s.nb.data.devices.find((d) => d.name === name)!;
const netboxWrites = (netboxId: number) =>
  s.nb.requests.filter((r) => r.method === "PATCH" && r.path === `/api/dcim/devices/${netboxId}/`);
const feed = async () =>
  (await s.api<{ items: { type: string; resourceId: string }[] }>("GET", "/api/v1/feeds/inventory/?limit=1000")).body
    .items;
const workflowRuns = async (id: string) => {
  const runs = [];
  for await (const w of temporal.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(w);
  return runs;
};
const slurmJobsNamed = async (name: string) =>
  (await slurmCommand(s.slurm!, "squeue", ["-h", "-t", "all", "-n", name, "-o", "%i"]))
    .split("\n")
    .filter(Boolean)
    .map(Number);

describe("jobs through the workflow agent, Temporal and the worker", () => {
  it("a bad params body is a 400 and creates nothing", async () => {
    const d = fresh();
    const before = (await s.api<{ count: number }>("GET", "/api/v1/jobs/")).body.count;
    const bad = await s.api("POST", "/api/v1/jobs/", {
      kind: "BURN_IN",
      deviceIds: [d.id],
      params: { durationMinutes: "soon" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/durationMinutes/);
    expect(
      (await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id], params: { tags: "gpu" } })).status,
    ).toBe(400);
    expect((await s.api<{ count: number }>("GET", "/api/v1/jobs/")).body.count).toBe(before);
  });

  it("ENROL ends SUCCEEDED: Ironic node available, NetBox active with platform class and tags, hub device, DHCP, history and feed", async () => {
    const d = fresh();
    const created = await s.api("POST", "/api/v1/jobs/", {
      kind: "ENROL",
      deviceIds: [d.id],
      params: { platformClass: "h200", tags: ["burn-in"] },
    });
    expect(created.status).toBe(201);
    const job = await s.waitForJob(created.body.id);
    expect(job, JSON.stringify(job.error)).toMatchObject({
      status: "SUCCEEDED",
      progress: 1,
      workflowId: job.id,
      error: null,
    });
    expect(Object.fromEntries(job.steps.map((st) => [st.name, st.status]))).toEqual({
      preflight: "SUCCEEDED",
      "netbox-check": "SUCCEEDED",
      "ironic-enroll": "SUCCEEDED",
      "ironic-ports": "SUCCEEDED",
      "bmc-configure": "SUCCEEDED",
      "ironic-inspect": "SUCCEEDED",
      "dhcp-configure": "SUCCEEDED",
      "ironic-provide": "SUCCEEDED",
      "netbox-activate": "SUCCEEDED",
      "hub-record": "SUCCEEDED",
    });

    const [node] = await ironicNodesNamed(d.name);
    expect(node).toMatchObject({ provision_state: "available", driver: "fake-hardware" });
    expect(node!.inspection_finished_at).not.toBeNull();
    const nb = netboxDevice(d.name);
    expect(nb.status).toBe("active");
    expect(nb.custom_fields.platform_class).toBe("h200");
    expect(nb.tags).toContain(s.nb.data.tags.find((t) => t.slug === "burn-in")!.id);

    const after = await device(d.id);
    expect(after).toMatchObject({
      netbox: { status: "active" },
      platformClass: "h200",
      ironic: { nodeUuid: node!.uuid, provisionState: "available", instance: "overcloud" },
    });
    expect(after.tags).toContain("burn-in");
    // One Ironic port per NetBox interface with a MAC (not the BMC's), linked to the switch port
    // its cable reaches.
    const ports = (
      (await ironicRequest(s.ironic.url, "GET", `/v1/ports?node=${node!.uuid}&detail=true`)) as {
        ports: { address: string; pxe_enabled: boolean; local_link_connection: Record<string, string> }[];
      }
    ).ports;
    const nics = after.interfaces.filter((i) => !i.mgmtOnly && i.macAddress);
    expect(nics.length).toBeGreaterThan(1);
    expect(ports.map((p) => p.address).sort()).toEqual(nics.map((i) => i.macAddress!.toLowerCase()).sort());
    for (const nic of nics.filter((i) => i.peerDevice)) {
      expect(ports.find((p) => p.address === nic.macAddress!.toLowerCase())!.local_link_connection).toMatchObject({
        switch_info: nic.peerDevice,
        port_id: nic.peerInterface,
      });
    }
    expect(ports.filter((p) => p.pxe_enabled)).toHaveLength(1);
    const history = (
      await s.api<{ items: { field: string; source: string; newValue: unknown }[] }>(
        "GET",
        `/api/v1/devices/${d.id}/history/?limit=100`,
      )
    ).body.items;
    // The worker's read-back records Ironic's state; NetBox's `active` is recorded once, by whichever
    // observer reports it first: the job's read-back or the NetBox agent polling the change log.
    expect(history.filter((h) => h.source === `job:${job.name}`).map((h) => h.field)).toContain("provisionState");
    const activated = history.filter((h) => h.field === "netboxStatus" && h.newValue === "active");
    expect(activated).toHaveLength(1);
    expect([`job:${job.name}`, "netbox"]).toContain(activated[0]!.source);
    const events = await feed();
    expect(events.filter((e) => e.resourceId === job.id).map((e) => e.type)).toEqual(
      expect.arrayContaining(["job.created", "job.updated"]),
    );
    expect(events.some((e) => e.resourceId === d.id && e.type === "device.updated")).toBe(true);

    const bmcMac = after.interfaces.find((i) => i.mgmtOnly && i.macAddress)!.macAddress!.toLowerCase();
    // The reservation is named by the device's id (a NetBox name is no file name); its host name is the name's.
    expect(await readFile(join(s.dhcpDir, `${d.id}.conf`), "utf8")).toContain(
      `\n${bmcMac},${after.bmcAddress},${d.name}-bmc\n`,
    );
    expect(
      await s.workflowAgent.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "workflow" }),
    ).toBeGreaterThan(0);
    // Enrolled: a second ENROL is refused.
    expect((await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id] })).body.code).toBe(
      "device_state_conflict",
    );
  }, 90_000);

  it("ENROL fails at ironic-ports when another Ironic node holds one of the device's MACs, naming it, and NetBox stays staged", async () => {
    const d = fresh();
    const mac = d.interfaces.find((i) => !i.mgmtOnly && i.macAddress)!.macAddress!.toLowerCase();
    const previous = await createNode(s.ironic.url, { name: `${d.name}-previous` });
    await ironicRequest(s.ironic.url, "POST", "/v1/ports", { address: mac, node_uuid: previous.uuid });

    const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
    expect(job).toMatchObject({ status: "FAILED", error: { step: "ironic-ports" } });
    expect(job.error!.message).toMatch(
      new RegExp(`the MAC address ${mac} of ${d.name} \\S+ is already a port of Ironic node ${d.name}-previous`),
    );
    expect(job.steps.find((st) => st.name === "netbox-activate")!.status).not.toBe("SUCCEEDED");
    expect(netboxDevice(d.name).status).toBe("staged");
    const [node] = await ironicNodesNamed(d.name);
    expect(
      ((await ironicRequest(s.ironic.url, "GET", `/v1/ports?node=${node!.uuid}`)) as { ports: unknown[] }).ports,
    ).toEqual([]);
  }, 90_000);

  it("BURN_IN runs a real SLURM job pinned to the node and records its result and exit code", async () => {
    const d = await enrolled(fresh({ slurm: true }));
    const created = (
      await s.api("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [d.id], params: { durationMinutes: 1 } })
    ).body;
    const job = await s.waitForJob(created.id);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    const run = job.steps.find((st) => st.name === "slurm-run")!;
    expect(run.message).toMatch(new RegExp(`^${d.name}: SLURM job (\\d+) COMPLETED exit 0$`));
    const slurmJobId = Number(/SLURM job (\d+)/.exec(run.message!)![1]);
    const sj = await scontrolJob(s.slurm!, slurmJobId);
    expect(sj).toMatchObject({
      state: "COMPLETED",
      nodeList: d.name,
      exitCode: "0:0",
      name: `fm-${job.name}-${d.name}`,
    });
    expect(sj!.comment?.trim()).toBe(`fleet-manager job ${job.id}`);
  }, 90_000);

  it("a cancelled BURN_IN ends CANCELLED and its SLURM job is cancelled", async () => {
    const d = await enrolled(fresh({ slurm: true }));
    const created = (
      await s.api("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [d.id], params: { durationMinutes: 60 } })
    ).body;
    const running = await eventually(async () => {
      const j = (await s.api("GET", `/api/v1/jobs/${created.id}/`)).body;
      expect(j.status).toBe("RUNNING");
      expect(j.steps.find((st) => st.name === "slurm-run")!.status).toBe("RUNNING");
      return j;
    }, 60_000);
    const slurmJobId = Number(
      /SLURM job\(s\) (\d+)/.exec(running.steps.find((st) => st.name === "slurm-submit")!.message!)![1],
    );
    await eventually(async () => expect((await scontrolJob(s.slurm!, slurmJobId))!.state).toBe("RUNNING"), 30_000);
    const cancelling = (await s.api("POST", `/api/v1/jobs/${created.id}/cancel/`)).body;
    expect(cancelling.status).toBe("CANCELLING");
    const job = await s.waitForJob(created.id);
    expect(job.status).toBe("CANCELLED");
    expect(job.steps.find((st) => st.name === "slurm-run")!.status).toBe("CANCELLED");
    expect((await scontrolJob(s.slurm!, slurmJobId))!.state).toBe("CANCELLED");
    expect((await temporal.workflow.getHandle(created.id).describe()).status.name).toBe("CANCELLED");
  }, 90_000);

  it("the worker killed mid-workflow and restarted finishes the job, applying no step's effect twice", async () => {
    const d = fresh({ slurm: true });
    const nbId = netboxDevice(d.name).id;
    const created = (
      await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id], params: { tags: ["gpu"] } })
    ).body;
    // Mid-workflow: its Ironic node exists (seen in Ironic itself, not in the hub's report, which
    // lags), so inspection, provide, DHCP and NetBox are still to come.
    await eventually(async () => expect(await ironicNodesNamed(d.name)).toHaveLength(1), 60_000, 50);
    await s.worker.stop("SIGKILL");
    let meanwhile: string;
    try {
      // Nothing moves while no worker runs; Temporal keeps the workflow.
      meanwhile = (await temporal.workflow.getHandle(created.id).describe()).status.name;
    } finally {
      s.worker = await s.startWorker();
    }
    expect(meanwhile).toBe("RUNNING");
    const job = await s.waitForJob(created.id, undefined, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(await ironicNodesNamed(d.name)).toHaveLength(1);
    // The device already had the gpu tag: the one NetBox write is the status, made once.
    expect(netboxWrites(nbId)).toHaveLength(1);
    expect(netboxDevice(d.name).status).toBe("active");
    // The hub recorded the change once: from the job's report, or from the netbox agent when its
    // change-log poll saw the new status first (the restart leaves it time to).
    const history = (
      await s.api<{ items: { field: string; source: string; newValue: unknown }[] }>(
        "GET",
        `/api/v1/devices/${d.id}/history/?field=netboxStatus&limit=100`,
      )
    ).body.items;
    const activated = history.filter((h) => h.newValue === "active");
    expect(activated, JSON.stringify(history)).toHaveLength(1);
    expect([`job:${job.name}`, "netbox"]).toContain(activated[0]!.source);

    // The same for a burn-in killed while its SLURM job runs: one SLURM job, not two.
    const burn = (
      await s.api("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [d.id], params: { durationMinutes: 3 } })
    ).body;
    await eventually(
      async () =>
        expect(
          (await s.api("GET", `/api/v1/jobs/${burn.id}/`)).body.steps.find((st) => st.name === "slurm-run")!.status,
        ).toBe("RUNNING"),
      60_000,
    );
    try {
      await s.worker.stop("SIGKILL");
    } finally {
      s.worker = await s.startWorker();
    }
    const burnt = await s.waitForJob(burn.id, undefined, 120_000);
    expect(burnt.status, JSON.stringify(burnt.error)).toBe("SUCCEEDED");
    expect(await slurmJobsNamed(`fm-${burnt.name}-${d.name}`)).toHaveLength(1);
  }, 240_000);

  it("the workflow agent killed between starting a workflow and reporting it leaves exactly one workflow", async () => {
    const d = fresh();
    await s.workflowAgent.stop("SIGKILL");
    let created: Job;
    try {
      created = (await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id] })).body;
      // What a killed agent leaves behind: the workflow started under the job's id, the job still PENDING.
      const input = workflowInputOf(created);
      await temporal.workflow.start(JOB_WORKFLOWS.ENROL, {
        workflowId: created.id,
        taskQueue: taskQueueFor(SITE),
        args: [input],
      });
      expect((await s.api("GET", `/api/v1/jobs/${created.id}/`)).body.status).toBe("PENDING");
    } finally {
      s.workflowAgent = await s.startWorkflowAgent();
    }
    await s.workflowAgent.waitForLog(
      (l) => l.msg === "workflow already started (an earlier run of this agent started it)" && l.jobId === created.id,
    );
    const job = await s.waitForJob(created.id, undefined, 90_000);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(await workflowRuns(created.id)).toHaveLength(1);

    // And a real SIGKILL right after the agent started a workflow: still one.
    const d2 = fresh();
    const second = (await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d2.id] })).body;
    await s.workflowAgent.waitForLog((l) => l.msg === "workflow started" && l.jobId === second.id, 30_000);
    try {
      await s.workflowAgent.stop("SIGKILL");
    } finally {
      s.workflowAgent = await s.startWorkflowAgent();
    }
    const done = await s.waitForJob(second.id, undefined, 90_000);
    expect(done.status, JSON.stringify(done.error)).toBe("SUCCEEDED");
    expect(await workflowRuns(second.id)).toHaveLength(1);
  }, 240_000);

  it("RELEASE checks SLURM and Ironic, then hands back; UNENROL restores staged", async () => {
    const d = await enrolled(fresh({ slurm: true }));
    const release = await s.runJob({ kind: "RELEASE", deviceIds: [d.id] });
    expect(release.status, JSON.stringify(release.error)).toBe("SUCCEEDED");
    expect(release.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "slurm-check:SUCCEEDED",
      "ironic-check:SUCCEEDED",
      "hand-back:SUCCEEDED",
    ]);

    // A drained SLURM node stops a release with the reason, and the job says which step failed.
    await setNodeState(s.slurm!, d.name, "drain", "fan failure");
    const refused = await s.runJob({ kind: "RELEASE", deviceIds: [d.id] });
    await setNodeState(s.slurm!, d.name, "resume");
    expect(refused).toMatchObject({ status: "FAILED", error: { step: "slurm-check" } });
    expect(refused.error!.message).toMatch(/drain.*fan failure/);

    const unenrol = await s.runJob({ kind: "UNENROL", deviceIds: [d.id] });
    expect(unenrol.status, JSON.stringify(unenrol.error)).toBe("SUCCEEDED");
    expect(netboxDevice(d.name).status).toBe("staged");
    expect((await device(d.id)).netbox.status).toBe("staged");
  }, 120_000);

  it("IMAGE_NODE deploys an image with user data onto the available node until active; TEARDOWN drives Ironic deleted and waits for available", async () => {
    const d = await enrolled(fresh({ slurm: true }));
    const [node] = await ironicNodesNamed(d.name);
    const image = "https://images.example/ubuntu-24.04-gpu.qcow2";
    const params = { image, osHash: { algo: "sha256", value: "c0".repeat(32) }, userData: "#cloud-config\n" };
    // A URL without its digest is refused before anything runs.
    const bad = await s.api("POST", "/api/v1/jobs/", { kind: "IMAGE_NODE", deviceIds: [d.id], params: { image } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/osHash/);
    // Nor anything Ironic would read as one of its own files, or plain http where the hub does not allow it.
    for (const image of ["file:///etc/ironic/ironic.conf", "http://images.example/u.img"]) {
      const refused = await s.api("POST", "/api/v1/jobs/", {
        kind: "IMAGE_NODE",
        deviceIds: [d.id],
        params: { image, osHash: params.osHash },
      });
      expect([refused.status, (refused.body as { errors?: { path: string }[] }).errors?.[0]?.path], image).toEqual([
        400,
        "body.params.image",
      ]);
    }
    const imaged = await s.runJob({ kind: "IMAGE_NODE", deviceIds: [d.id], params }, 90_000);
    expect(imaged.status, JSON.stringify(imaged.error)).toBe("SUCCEEDED");
    expect(imaged.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "ironic-deploy:SUCCEEDED",
      "hub-record:SUCCEEDED",
    ]);
    expect(await getNode(s.ironic.url, node!.uuid)).toMatchObject({
      provision_state: "active",
      instance_info: { image_source: image, image_os_hash_value: "c0".repeat(32), configdrive: "******" },
    });
    // The job's read-back recorded it (no OpenStack agent runs here), and a second image is refused.
    expect((await device(d.id)).ironic.provisionState).toBe("active");
    const again = await s.api("POST", "/api/v1/jobs/", { kind: "IMAGE_NODE", deviceIds: [d.id], params });
    expect(again.body).toMatchObject({ code: "device_state_conflict" });
    expect(again.body.detail).toMatch(/not available to deploy an image on \(Ironic active\)/);

    const job = await s.runJob({ kind: "TEARDOWN", deviceIds: [d.id] }, 90_000);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect((await getNode(s.ironic.url, node!.uuid)).provision_state).toBe("available");
    expect((await device(d.id)).ironic.provisionState).toBe("available");
  }, 120_000);

  it("a NODE_SWAP whose spare is enrolled fails at validate and touches nothing", async () => {
    const d = fresh();
    const spare = await enrolled(fresh());
    const before = await device(d.id);
    const job = await s.runJob({ kind: "NODE_SWAP", deviceIds: [d.id], params: { spareDeviceId: spare.id } });
    expect(job.status).toBe("FAILED");
    expect(job.steps.slice(0, 3).map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "validate:FAILED",
      "bmc-macs:PENDING",
    ]);
    expect(job.error?.message).toMatch(/^validate: spare .* is enrolled \(Ironic node .*\): a spare is never-enrolled/);
    expect((await device(d.id)).version).toBe(before.version);
  });

  it("the workflow agent lists jobs every 5 s unless told otherwise, and its store is `workflow`", async () => {
    const env = { ...s.workflowEnv, METRICS_PORT: "0" };
    delete (env as Record<string, string | undefined>).FM_REFLECT_INTERVAL_S;
    const agent = await startAgent("workflow", env);
    try {
      expect(await agent.waitForLog((l) => l.msg === "controller started")).toMatchObject({
        store: "workflow",
        intervalS: 5,
      });
      // The cadence it keeps, not only the one it announces: three cycles, each started once the
      // 5 s after the one before had passed (not before), and well before a second interval (by).
      const cycles = () => agent.logs.filter((l) => l.msg === "controller cycle done" && l.store === "workflow");
      await agent.waitForLog(() => cycles().length >= 3, 20_000);
      const at = cycles()
        .slice(0, 3)
        .map((l) => l.time as number);
      for (let i = 1; i < at.length; i++) {
        expect(at[i]! - at[i - 1]!, `cycle ${i + 1}`).toBeGreaterThanOrEqual(5_000);
        expect(at[i]! - at[i - 1]!, `cycle ${i + 1}`).toBeLessThan(9_000);
      }
    } finally {
      await agent.stop();
    }
  }, 40_000);

  it("a Temporal outage stops nothing for good: the agents retry, and the job finishes once Temporal is back", async () => {
    const d = fresh();
    const errors = async () =>
      (await s.workflowAgent.metric("fleet_manager_reflector_errors_total", { store: "workflow" })) ?? 0;
    const before = await errors();
    await s.temporal.pause();
    let created: Job;
    try {
      created = (await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id] })).body;
      // The agent cannot start the workflow: failed cycles, counted, and the job stays where it was.
      await eventually(async () => expect(await errors()).toBeGreaterThan(before), 40_000);
      expect(["PENDING", "SUBMITTED"]).toContain((await s.api("GET", `/api/v1/jobs/${created.id}/`)).body.status);
    } finally {
      await s.temporal.resume();
    }
    const job = await s.waitForJob(created.id, undefined, 90_000);
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(await workflowRuns(created.id)).toHaveLength(1);
    expect(netboxDevice(d.name).status).toBe("active");
  }, 150_000);
});
