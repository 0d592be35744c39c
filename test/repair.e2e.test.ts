/**
 * REPAIR end to end, every part a process: the hub, the NetBox test server, a real Ironic
 * (fake-hardware), a real SLURM 22.05, a real Temporal dev server, the site's netbox agent,
 * workflow agent, Temporal worker and SLURM agent (which mirrors the repair's cordon as a drain),
 * and fleetctl, as an operator runs it, to tell the waiting job the repair's outcome. Also the
 * unenrolment of an active tray filing its site's topology-sync request.
 * Asserted: what the hub's API, Ironic and SLURM (`scontrol show node`) show.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, Job, TopologySyncList } from "@fm/domain";
import { WAITING_FOR_OPERATOR } from "@fm/domain/workflows";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import { ADMIN_SECRET, REPO_ROOT } from "@fm/test-support/process";
import { slurmCommand } from "@fm/test-support/slurm";
import { eventually } from "@fm/test-support/wait";

const BIN = join(REPO_ROOT, "apps/fleetctl/bin/fleetctl.js");
let s: JobsStack;
let slurmAgent: AgentProcess;
let home: string;
/** A device named by a file here has a fault its burn-in finds (the nodes run on this machine). */
let faults: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "fm-repair-e2e-"));
  faults = await mkdtemp(join(tmpdir(), "fm-repair-faults-"));
  s = await startJobsStack({
    stagedDevices: 4,
    slurmNodes: 3,
    // gpu003's re-test fails, as a burn-in that finds the fault still there.
    burnInCommand: `echo "burn-in of $FM_DEVICE"; [ "$FM_DEVICE" != gpu003 ] && [ ! -e "${faults}/$FM_DEVICE" ]`,
  });
  const tokenFile = join(home, "slurm-jwt");
  await writeFile(tokenFile, `${s.slurm!.token}\n`, { mode: 0o600 });
  slurmAgent = await startAgent("slurm", {
    ...s.agentEnv("slurm"),
    SLURM_URL: s.slurm!.url,
    SLURM_API_VERSION: "v0.0.38",
    SLURM_USER: "root",
    SLURM_TOKEN_FILE: tokenFile,
    // v0.0.38 has no node update: the agent drains through scontrol, which finds slurmctld here.
    SLURM_CONF: s.slurm!.slurmConf,
  });
  await writeFile(join(home, "admin.secret"), `${ADMIN_SECRET}\n`, { mode: 0o600 });
  const profile = await fleetctl([
    "config",
    "set-profile",
    "e2e",
    "--hub",
    s.hub.url,
    "--env",
    "dev",
    "--client-id",
    "fleet-admin",
    "--client-secret-file",
    join(home, "admin.secret"),
    "--use",
  ]);
  expect(profile.code, profile.stderr).toBe(0);
  const login = await fleetctl(["api", "login", "--scope", "operate"]);
  expect(login.code, login.stderr).toBe(0);
}, 360_000);
afterAll(async () => {
  await slurmAgent?.stop("SIGKILL");
  await s?.stop();
  if (faults) await rm(faults, { recursive: true, force: true });
}, 120_000);

/** fleetctl as an operator's shell runs it: a child process with its own home. */
function fleetctl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, "config") },
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    p.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    p.on("error", reject);
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;
const ironicNode = async (name: string) =>
  ((await ironicRequest(s.ironic.url, "GET", "/v1/nodes?detail=true")) as { nodes: RawIronicNode[] }).nodes.find(
    (n) => n.name === name,
  )!;
/** The node as `scontrol -o show node` prints it: drained (State=IDLE+DRAIN) or not, and its Reason. */
async function slurmNode(name: string): Promise<{ drained: boolean; reason: string | null }> {
  const out = (await slurmCommand(s.slurm!, "scontrol", ["-o", "show", "node", name])).trim();
  const state = /State=(\S+)/.exec(out)?.[1] ?? "";
  const reason = /Reason=(.*?) \[/.exec(out)?.[1] ?? null;
  return { drained: state.includes("DRAIN"), reason };
}
const enrol = async (d: Device) => {
  const job = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
  expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
};
/** Creates a REPAIR and waits until it hands the device to the operator. */
async function repairWaiting(d: Device, ticket: string): Promise<Job> {
  const created = await s.api("POST", "/api/v1/jobs/", {
    kind: "REPAIR",
    deviceIds: [d.id],
    params: { ticket, description: "GPU 3 fell off the bus", burnInMinutes: 1 },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return eventually(
    async () => {
      const job = (await s.api("GET", `/api/v1/jobs/${created.body.id}/`)).body;
      const step = job.steps.find((st) => st.name === "operator");
      if (step?.status !== "RUNNING" || step.message !== WAITING_FOR_OPERATOR)
        throw new Error(`${job.status}: ${job.steps.map((st) => `${st.name}=${st.status}`).join(" ")}`);
      return job;
    },
    90_000,
    250,
  );
}

describe("REPAIR through the workflow agent, Temporal, the worker and the SLURM agent", () => {
  it("cordons, drains and puts the node into maintenance, waits for the operator, then re-tests and releases", async () => {
    const d = s.staged[0]!;
    await enrol(d);
    // Its burn-in found the fault: RELEASE refuses it until a burn-in passes.
    await writeFile(join(faults, d.name), "");
    const burnIn = await s.runJob({ kind: "BURN_IN", deviceIds: [d.id], params: { durationMinutes: 1 } }, 120_000);
    expect(burnIn.status).toBe("FAILED");
    expect((await device(d.id)).burnIn).toMatchObject({ status: "FAILED", jobId: burnIn.id });
    const refused = await s.api("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [d.id] });
    expect([refused.status, refused.body.code]).toEqual([409, "burn_in_failed"]);
    await rm(join(faults, d.name));

    const waiting = await repairWaiting(d, "OPS-101");
    expect(waiting.status).toBe("RUNNING");
    expect(waiting.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "cordon:SUCCEEDED",
      "slurm-drain:SUCCEEDED",
      "ironic-maintenance:SUCCEEDED",
      "operator:RUNNING",
      "uncordon:PENDING",
      "burn-in:PENDING",
      "release:PENDING",
    ]);
    // Out of service everywhere while the operator works on it.
    expect(await device(d.id)).toMatchObject({
      cordoned: true,
      cordonReason: "repair OPS-101: GPU 3 fell off the bus",
      cordonedBy: `job:${waiting.name}`,
    });
    expect(await slurmNode(d.name)).toEqual({
      drained: true,
      reason: "fleet-manager cordon: repair OPS-101: GPU 3 fell off the bus",
    });
    expect(await ironicNode(d.name)).toMatchObject({
      maintenance: true,
      maintenance_reason: "fleet-manager repair OPS-101: GPU 3 fell off the bus",
    });

    // The job waits as long as it takes: three more rounds of the workflow agent (1 s each)
    // and a moment for the worker later, nothing has moved without the operator.
    const rounds = () => s.workflowAgent.logs.filter((l) => l.msg === "controller cycle done").length;
    const seen = rounds();
    await s.workflowAgent.waitForLog(() => rounds() >= seen + 3, 30_000);
    const still = (await s.api("GET", `/api/v1/jobs/${waiting.id}/`)).body as Job;
    expect(still.status).toBe("RUNNING");
    expect(still.steps.slice(4).map((st) => `${st.name}:${st.status}`)).toEqual([
      "operator:RUNNING",
      "uncordon:PENDING",
      "burn-in:PENDING",
      "release:PENDING",
    ]);
    expect(await device(d.id)).toMatchObject({ cordoned: true });
    expect((await ironicNode(d.name)).maintenance).toBe(true);

    const signalled = await fleetctl([
      "api",
      "job",
      "signal",
      waiting.name,
      "--outcome",
      "repaired",
      "--note",
      "reseated GPU 3",
      "-o",
      "json",
    ]);
    expect(signalled.code, signalled.stderr).toBe(0);
    expect(JSON.parse(signalled.stdout)).toMatchObject({
      id: waiting.id,
      signal: { outcome: "repaired", note: "reseated GPU 3", signalledBy: "fleet-admin" },
    });

    const done = await s.waitForJob(waiting.id, undefined, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("SUCCEEDED");
    expect(done.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "cordon:SUCCEEDED",
      "slurm-drain:SUCCEEDED",
      "ironic-maintenance:SUCCEEDED",
      "operator:SUCCEEDED",
      "uncordon:SUCCEEDED",
      "burn-in:SUCCEEDED",
      "release:SUCCEEDED",
    ]);
    expect(done.steps.find((st) => st.name === "operator")!.message).toBe("repaired (fleet-admin): reseated GPU 3");
    expect(done.steps.find((st) => st.name === "burn-in")!.message).toBe("gpu001: PASSED");
    expect(done.burnIn.map((r) => [r.deviceId, r.status])).toEqual([[d.id, "PASSED"]]);
    // Back in service everywhere.
    expect(await device(d.id)).toMatchObject({ cordoned: false, ironic: { maintenance: false } });
    expect(await slurmNode(d.name)).toEqual({ drained: false, reason: null });
    expect(await ironicNode(d.name)).toMatchObject({ maintenance: false, maintenance_reason: null });
    // The re-test is its last burn-in: RELEASE hands it over without an override.
    expect((await device(d.id)).burnIn).toMatchObject({ status: "PASSED", jobId: done.id });
    const released = await s.api("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [d.id] });
    expect(released.status, JSON.stringify(released.body)).toBe(201);
  }, 420_000);

  it("an operator's `failed` ends the job FAILED with the device still cordoned, drained and in maintenance", async () => {
    const d = s.staged[1]!;
    await enrol(d);
    const waiting = await repairWaiting(d, "OPS-102");
    const signalled = await fleetctl(["api", "job", "signal", waiting.id, "--outcome", "failed", "--note", "to RMA"]);
    expect(signalled.code, signalled.stderr).toBe(0);
    const done = await s.waitForJob(waiting.id, undefined, 60_000);
    expect(done).toMatchObject({ status: "FAILED", error: { step: "operator" } });
    expect(done.error!.message).toMatch(/the operator reported the repair failed: to RMA/);
    expect(done.steps.slice(-3).map((st) => st.status)).toEqual(["SKIPPED", "SKIPPED", "SKIPPED"]);
    expect(await device(d.id)).toMatchObject({ cordoned: true });
    expect((await slurmNode(d.name)).drained).toBe(true);
    expect((await ironicNode(d.name)).maintenance).toBe(true);

    // A second signal to the ended job is refused, with the CLI's error and exit code.
    const late = await fleetctl(["api", "job", "signal", waiting.id, "--outcome", "repaired"]);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toMatch(/already signalled 'failed'/);
  }, 300_000);

  it("a re-test that fails after the repair cordons the device again and fails the job at burn-in", async () => {
    const d = s.staged[2]!;
    await enrol(d);
    const waiting = await repairWaiting(d, "OPS-103");
    expect((await s.api("POST", `/api/v1/jobs/${waiting.id}/signal/`, { outcome: "repaired" })).status).toBe(200);
    const done = await s.waitForJob(waiting.id, undefined, 120_000);
    expect(done).toMatchObject({ status: "FAILED", error: { step: "burn-in" } });
    expect(done.error!.message).toBe("burn-in: re-test failed on gpu003 (hardware-tests exited 1); cordoned again");
    expect((await device(d.id)).burnIn).toMatchObject({ status: "FAILED", jobId: done.id });
    expect(await device(d.id)).toMatchObject({
      cordoned: true,
      cordonReason: "repair OPS-103: GPU 3 fell off the bus: re-test failed",
    });
    await eventually(async () => expect((await slurmNode(d.name)).drained).toBe(true), 30_000);
    expect((await ironicNode(d.name)).maintenance).toBe(true);
  }, 300_000);
});

describe("UNENROL of an active tray", () => {
  it("files its site's topology-sync request once the site has a topology region", async () => {
    const d = s.staged[3]!;
    await enrol(d);
    expect((await s.api("PATCH", `/api/v1/sites/${s.siteId}/`, { region: "us-east-1" })).status).toBe(200);
    const job = await s.runJob({ kind: "UNENROL", deviceIds: [d.id], params: { reason: "tray to RMA" } });
    expect(job.status, JSON.stringify(job.error)).toBe("SUCCEEDED");
    expect(job.steps.map((st) => `${st.name}:${st.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "netbox-stage:SUCCEEDED",
      "topology-sync:SUCCEEDED",
      "hub-record:SUCCEEDED",
    ]);
    const requests = (await s.api<TopologySyncList>("GET", `/api/v1/sites/${s.siteId}/topology-sync/`)).body.items;
    expect(requests).toEqual([
      expect.objectContaining({
        region: "us-east-1",
        reason: `unenrolment of ${d.name} (job ${job.name}): tray to RMA`,
        status: "REQUESTED",
      }),
    ]);
  }, 120_000);
});
