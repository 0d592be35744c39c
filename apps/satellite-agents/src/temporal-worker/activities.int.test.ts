/**
 * The job workflows' activities under Temporal's MockActivityEnvironment, against real peers:
 * Ironic (fake-hardware), SLURM (slurmctld, slurmd, slurmrestd), the NetBox test server and an
 * in-process hub on PostgreSQL. The activities use the real clients; the assertions read each
 * peer's state back independently (raw Ironic HTTP, scontrol, the NetBox store, the hub API).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActivityCancellationDetails, ApplicationFailure, CancelledFailure } from "@temporalio/common";
import { MockActivityEnvironment } from "@temporalio/testing";
import { DefaultLogger } from "@temporalio/worker";
import { HubClient, IronicClient, NetboxClient, SlurmClient } from "@fm/clients";
import type { Device, Job } from "@fm/domain";
import { NON_RETRYABLE_FAILURES, type DevicePlan } from "@fm/domain/workflows";
import { startOAuthTestHub, type TestHub } from "@fm/hub/testing";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { createNode, failClean, getNode, ironicRequest, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { freePort } from "@fm/test-support/ports";
import {
  realisticFleet,
  startNetboxServer,
  type DeviceRecord,
  type NetboxServer,
} from "@fm/test-support/netbox-server";
import { bearer, clientToken } from "@fm/test-support/process";
import { scontrolJob, slurmCommand, startSlurm, waitForScontrolJob, type SlurmPeer } from "@fm/test-support/slurm";
import { createActivities, type ActivityDeps } from "./activities.ts";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const NETBOX_TOKEN = "0123456789abcdef0123456789abcdef01234567";
/** Activity failures are expected here: keep the SDK's "Activity failed" warnings out of the output. */
const quietLogger = new DefaultLogger("ERROR");
/** Tests that wait on Ironic's conductor or on SLURM jobs. */
const WAITING = 90_000;

/** A fresh environment per run: a cancelled MockActivityEnvironment stays cancelled. */
function activityEnv(): { env: MockActivityEnvironment; heartbeats: unknown[] } {
  const env = new MockActivityEnvironment(undefined, { logger: quietLogger });
  const heartbeats: unknown[] = [];
  env.on("heartbeat", (d: unknown) => heartbeats.push(d));
  return { env, heartbeats };
}

/** Runs one activity as Temporal would, with its heartbeats. */
async function run<P extends unknown[], R>(
  fn: (...args: P) => Promise<R>,
  ...args: P
): Promise<{ result: R; heartbeats: unknown[] }> {
  const { env, heartbeats } = activityEnv();
  const result = await env.run<P, R, typeof fn>(fn, ...args);
  return { result, heartbeats };
}

/** What an activity rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("the activity succeeded; a failure was expected");
}

/** A failure retrying cannot fix, of this type (one the workflows' retry policy does not retry). */
function expectFinal(
  err: unknown,
  type: (typeof NON_RETRYABLE_FAILURES)[number],
  message?: string | RegExp,
): ApplicationFailure {
  expect(err).toBeInstanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  expect(f.type).toBe(type);
  expect(f.nonRetryable).toBe(true);
  if (message !== undefined) expect(f.message).toMatch(message);
  return f;
}

/**
 * An error Temporal retries: not a non-retryable ApplicationFailure, and (as the worker turns
 * any other error into an ApplicationFailure typed by its name) no type the retry policy skips.
 */
function expectRetryable(err: unknown, name: string): void {
  expect(err).toBeInstanceOf(Error);
  if (err instanceof ApplicationFailure) expect(err.nonRetryable).toBe(false);
  expect((err as Error).name).toBe(name);
  expect(NON_RETRYABLE_FAILURES as readonly string[]).not.toContain((err as Error).name);
}

let seq = 0;
/** A device as preflight plans it; a fresh name (and Ironic node name) per call. */
function plan(over: Partial<DevicePlan> = {}): DevicePlan {
  const n = ++seq;
  return {
    deviceId: randomUUID(),
    name: `act-node-${n}`,
    netboxId: null,
    bmcAddress: `10.200.0.${n}`,
    bmcMac: null,
    ironicInstance: "overcloud",
    ironicNodeUuid: null,
    slurmNodeName: null,
    resourceClass: "GPU_COMPUTE",
    ...over,
  };
}

let ironic: IronicPeer;
let slurm: SlurmPeer;
let nb: NetboxServer;
let hub: TestHub & { url: string; adminToken: string };
let workerToken: string;
let scratch: string;
let clients: Pick<ActivityDeps, "hub" | "netbox" | "ironic" | "slurm">;

/** The activities as the worker builds them, on the real clients; `over` replaces any dependency. */
function activities(over: Partial<ActivityDeps> = {}) {
  return createActivities({
    site: "act1",
    ...clients,
    ironicDriver: "fake-hardware",
    dhcpHostsDir: join(scratch, "dhcp-hosts"),
    burnInCommand: "sleep 1",
    pollIntervalMs: 100,
    ...over,
  });
}

/** Every Ironic node with this name (uuids), read without the client under test. */
async function ironicNodesNamed(name: string): Promise<string[]> {
  const { nodes } = (await ironicRequest(ironic.url, "GET", "/v1/nodes?fields=uuid,name&limit=1000")) as {
    nodes: { uuid: string; name: string | null }[];
  };
  return nodes.filter((n) => n.name === name).map((n) => n.uuid);
}

/** Every job slurmctld knows with this name (ids), from scontrol. */
async function slurmJobsNamed(name: string): Promise<number[]> {
  const out = await slurmCommand(slurm, "scontrol", ["-o", "show", "job"]);
  return out
    .split("\n")
    .filter((line) => line.includes(` JobName=${name} `))
    .map((line) => Number(/^JobId=(\d+)/.exec(line)?.[1]));
}

/** PATCH requests the NetBox server received for this device. */
const netboxPatches = (id: number) =>
  nb.requests.filter((r) => r.method === "PATCH" && r.path === `/api/dcim/devices/${id}/`).length;

/** The fleet's GPU servers with an out-of-band IP (as generated), in id order. */
let gpuList: DeviceRecord[] | undefined;
const gpuServers = (): DeviceRecord[] => {
  const role = nb.data.deviceRoles.find((r) => r.slug === "gpu-node")!.id;
  return (gpuList ??= nb.data.devices.filter((d) => d.role === role && d.oob_ip !== null));
};
/** A NetBox GPU server for one test, set to `status`; each call takes another device. */
let gpuTaken = 0;
function netboxDevice(status: string): DeviceRecord {
  const d = gpuServers()[gpuTaken++];
  if (!d) throw new Error("the NetBox fleet has no GPU server left for this test");
  d.status = status;
  return d;
}

const api = async <T>(
  method: string,
  path: string,
  body?: unknown,
  token = hub.adminToken,
): Promise<{ status: number; body: T }> => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
};

beforeAll(async () => {
  const data = realisticFleet({ sites: 1, devicesPerSite: 24 });
  // NetBox tag names are labels and their slugs the identifiers: make one differ, as in real NetBox.
  data.tags.find((t) => t.slug === "gpu")!.name = "GPU";
  [ironic, slurm, nb, hub, scratch] = await Promise.all([
    startIronic(),
    startSlurm(),
    startNetboxServer({ token: NETBOX_TOKEN, data }),
    startOAuthTestHub(),
    mkdtemp(join(tmpdir(), "fm-activities-")),
  ]);

  // The hub: one site served by one satellite, whose Temporal worker token the activities use.
  const siteId = await seedNetboxOnlyDevices(
    hub.db.prisma,
    { slug: "act1" },
    [0, 1, 2, 3].map((i) => ({ name: `act-hub-${i}`, role: "gpu-node" as const })),
  );
  await hub.db.prisma.site.update({ where: { id: siteId }, data: { slurmEnabled: true, configureDhcp: true } });
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "POST",
    "/api/v1/satellites/",
    { name: "sys9-act1", siteIds: [siteId], environment: "dev" },
  );
  const worker = sat.body.secrets.find((s) => s.agent === "temporal-worker")!;
  workerToken = await clientToken(hub.url, worker.clientId, worker.clientSecret, "fleet.read agent:temporal-worker");

  clients = {
    hub: new HubClient({ baseUrl: hub.url, token: async () => workerToken }),
    netbox: new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 }),
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    slurm: new SlurmClient({ baseUrl: slurm.url, user: "root", token: () => slurm.token, backoffMs: 20 }),
  };
}, 180_000);

afterAll(async () => {
  await Promise.all(
    [
      ironic?.stop(),
      slurm?.stop(),
      nb?.stop(),
      hub?.close(),
      scratch ? rm(scratch, { recursive: true, force: true }) : undefined,
    ].map((p) => Promise.resolve(p).catch(() => {})),
  );
}, 60_000);

// ---------------------------------------------------------------------------------------------
// Ironic
// ---------------------------------------------------------------------------------------------

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
});

// ---------------------------------------------------------------------------------------------
// SLURM
// ---------------------------------------------------------------------------------------------

describe("SLURM activities", () => {
  it(
    "slurmSubmitBurnIn submits once per job and device, pinned to the node; slurmWait returns COMPLETED and exit code 0",
    async () => {
      const acts = activities();
      const d = plan({ name: "act-burn-ok", slurmNodeName: "gpu001" });
      const args = { jobId: randomUUID(), jobName: `burn-in-ok-${process.pid}`, device: d, durationMinutes: 1 };
      const { result: id } = await run(acts.slurmSubmitBurnIn, args);
      expect((await run(acts.slurmSubmitBurnIn, args)).result).toBe(id);
      const name = `fm-${args.jobName}-${d.name}`;
      expect(await slurmJobsNamed(name)).toEqual([id]);

      const { result, heartbeats } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      expect(result).toEqual({ device: d.name, slurmJobId: id, state: "COMPLETED", exitCode: 0 });
      expect(heartbeats.length).toBeGreaterThan(0);
      expect(await scontrolJob(slurm, id)).toMatchObject({
        name,
        state: "COMPLETED",
        exitCode: "0:0",
        nodeList: "gpu001",
        comment: expect.stringMatching(new RegExp(`^fleet-manager job ${args.jobId}\\s*$`)),
      });
      // Submitting again after the job ended still finds it: no second burn-in.
      expect((await run(acts.slurmSubmitBurnIn, args)).result).toBe(id);
      expect(await slurmJobsNamed(name)).toEqual([id]);
    },
    WAITING,
  );

  it(
    "slurmWait returns FAILED and the command's exit code for a failing burn-in",
    async () => {
      const acts = activities({ burnInCommand: "exit 3" });
      const d = plan({ name: "act-burn-fail", slurmNodeName: "gpu002" });
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName: `burn-in-fail-${process.pid}`,
        device: d,
        durationMinutes: 1,
      });
      const { result } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      expect(result).toEqual({ device: d.name, slurmJobId: id, state: "FAILED", exitCode: 3 });
      expect(await scontrolJob(slurm, id)).toMatchObject({ state: "FAILED", exitCode: "3:0" });
    },
    WAITING,
  );

  it(
    "slurmWait stopped by a worker shutdown leaves the SLURM job running; cancelled, it cancels the SLURM job",
    async () => {
      const acts = activities({ burnInCommand: "sleep 300" });
      const d = plan({ name: "act-burn-cancel", slurmNodeName: "gpu004" });
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName: `burn-in-cancel-${process.pid}`,
        device: d,
        durationMinutes: 10,
      });

      /** An attempt of slurmWait, stopped once it has seen the job RUNNING. */
      const attempt = async (stop: (env: MockActivityEnvironment) => void): Promise<unknown> => {
        const { env } = activityEnv();
        const running = new Promise<void>((resolve) =>
          env.on("heartbeat", (h: { state?: string }) => h.state === "RUNNING" && resolve()),
        );
        const waiting = env.run(acts.slurmWait, { slurmJobId: id, device: d.name });
        // Until then, a settled slurmWait is the failure to report.
        await Promise.race([
          running,
          waiting.then((r) => Promise.reject(new Error(`slurmWait ended before it was stopped: ${JSON.stringify(r)}`))),
        ]);
        stop(env);
        return rejection(waiting);
      };

      // The worker shuts down (a deploy): this attempt fails, and the next one, on another
      // worker, must find the burn-in still running.
      const shutdown = await attempt((env) =>
        env.cancel("WORKER_SHUTDOWN", new ActivityCancellationDetails({ workerShutdown: true })),
      );
      expect(shutdown).toBeInstanceOf(CancelledFailure);
      expect((await scontrolJob(slurm, id))?.state).toBe("RUNNING");

      // The workflow is cancelled: the activity is, and so is the SLURM job.
      expect(await attempt((env) => env.cancel())).toBeInstanceOf(CancelledFailure);
      expect((await waitForScontrolJob(slurm, id, ["CANCELLED"])).state).toBe("CANCELLED");
    },
    WAITING,
  );
});

// ---------------------------------------------------------------------------------------------
// NetBox
// ---------------------------------------------------------------------------------------------

describe("NetBox activities", () => {
  const planFor = (d: DeviceRecord, over: Partial<DevicePlan> = {}) =>
    plan({ name: d.name!, netboxId: d.id, bmcAddress: null, ...over });

  it("netboxCheckStaged passes a staged device with a BMC IP and refuses one not staged or without an out-of-band IP", async () => {
    const acts = activities();
    expect((await run(acts.netboxCheckStaged, planFor(netboxDevice("staged")))).result).toBeUndefined();
    expectFinal(
      await rejection(run(acts.netboxCheckStaged, planFor(netboxDevice("active")))),
      "BadInput",
      /is active in NetBox; enrolment needs it staged/,
    );
    const noOob = netboxDevice("staged");
    noOob.oob_ip = null;
    expectFinal(await rejection(run(acts.netboxCheckStaged, planFor(noOob))), "BadInput", /out-of-band \(BMC\) IP/);
    expectFinal(await rejection(run(acts.netboxCheckStaged, plan({ netboxId: null }))), "BadInput", /has no NetBox id/);
  });

  it("netboxActivate with a tag NetBox does not have is BadInput and changes nothing", async () => {
    const nbd = netboxDevice("staged");
    const before = structuredClone(nbd);
    const f = expectFinal(
      await rejection(
        run(activities().netboxActivate, planFor(nbd), { platformClass: "gb300", tags: ["gpu", "no-such-tag"] }),
      ),
      "BadInput",
    );
    expect(f.message).toContain("no-such-tag");
    expect(netboxPatches(nbd.id)).toBe(0);
    expect(nbd).toEqual(before);
  });

  it("netboxActivate sets status active, platform class and tags, and a second run sends no PATCH", async () => {
    const acts = activities();
    const nbd = netboxDevice("staged");
    const d = planFor(nbd);
    const burnIn = nb.data.tags.find((t) => t.slug === "burn-in")!.id;
    nbd.tags = nbd.tags.filter((t) => t !== burnIn);
    await run(acts.netboxActivate, d, { platformClass: "gb300", tags: ["burn-in", "fleet-managed"] });
    expect(nbd.status).toBe("active");
    expect(nbd.custom_fields.platform_class).toBe("gb300");
    expect(nbd.tags).toContain(burnIn);
    expect(nbd.tags).toContain(nb.data.tags.find((t) => t.slug === "fleet-managed")!.id);
    const patches = netboxPatches(nbd.id);
    expect(patches).toBeGreaterThan(0);

    await run(acts.netboxActivate, d, { platformClass: "gb300", tags: ["burn-in", "fleet-managed"] });
    expect(netboxPatches(nbd.id)).toBe(patches);
  });
});

// ---------------------------------------------------------------------------------------------
// DHCP
// ---------------------------------------------------------------------------------------------

describe("configureDhcp", () => {
  it("writes the BMC's reservation once, and refuses a device without a MAC or a worker without a folder", async () => {
    const acts = activities();
    const dir = join(scratch, "dhcp-hosts");
    const d = plan({ bmcMac: "B8:3F:D2:00:AB:CD", bmcAddress: "10.201.3.4" });
    expect((await run(acts.configureDhcp, d)).result).toEqual({ written: true });
    const file = join(dir, `${d.name}.conf`);
    const content = await readFile(file, "utf8");
    const entries = content.split("\n").filter((l) => l && !l.startsWith("#"));
    expect(entries).toHaveLength(1);
    // dnsmasq's --dhcp-hostsdir files take the --dhcp-hostsfile format: `<mac>,<ip>,<name>`,
    // without the `dhcp-host=` keyword.
    expect(entries[0]).toBe(`b8:3f:d2:00:ab:cd,10.201.3.4,${d.name}-bmc`);

    expect((await run(acts.configureDhcp, d)).result).toEqual({ written: false });
    expect(await readFile(file, "utf8")).toBe(content);

    const noMac = plan({ bmcMac: null });
    expectFinal(await rejection(run(acts.configureDhcp, noMac)), "BadInput", /needs a BMC MAC address/);
    expect(await readdir(dir)).toEqual([`${d.name}.conf`]);
    expectFinal(await rejection(run(activities({ dhcpHostsDir: undefined }).configureDhcp, d)), "NotConfigured");
  });
});

// ---------------------------------------------------------------------------------------------
// The hub
// ---------------------------------------------------------------------------------------------

describe("hub activities", () => {
  /** act-hub-<i> in the hub, staged, tied to a NetBox GPU server and SLURM node, with a BMC interface. */
  async function hubDevice(i: number): Promise<{ device: Device; nbd: DeviceRecord }> {
    const nbd = netboxDevice("staged");
    const row = (await hub.db.prisma.device.findFirst({ where: { name: `act-hub-${i}` } }))!;
    await hub.db.prisma.device.update({
      where: { id: row.id },
      data: {
        netboxStatus: "staged",
        netboxId: nbd.id,
        bmcAddress: `10.202.0.${i + 1}`,
        slurmNodeName: `gpu00${i + 1}`,
      },
    });
    await hub.db.prisma.deviceInterface.create({
      data: { deviceId: row.id, name: "bmc", macAddress: `3c:ec:ef:00:00:0${i}`, mgmtOnly: true },
    });
    return { device: (await api<Device>("GET", `/api/v1/devices/${row.id}/`)).body, nbd };
  }
  const createJob = async (kind: string, deviceIds: string[]) => {
    const r = await api<Job>("POST", "/api/v1/jobs/", { kind, deviceIds });
    expect(r.status).toBe(201);
    return r.body;
  };

  it("preflight plans an active job (site flags, devices) and returns null once it was cancelled while PENDING", async () => {
    const acts = activities();
    const { device, nbd } = await hubDevice(0);
    const job = await createJob("ENROL", [device.id]);
    const { result } = await run(acts.preflight, { jobId: job.id, kind: "ENROL" });
    expect(result).toEqual({
      site: { slug: "act1", slurmEnabled: true, configureDhcp: true, platformClassActivityReady: false },
      devices: [
        {
          deviceId: device.id,
          name: "act-hub-0",
          netboxId: nbd.id,
          bmcAddress: "10.202.0.1",
          bmcMac: "3c:ec:ef:00:00:00",
          ironicInstance: "overcloud",
          ironicNodeUuid: null,
          slurmNodeName: "gpu001",
          resourceClass: "GPU_COMPUTE",
        },
      ],
    });
    expectFinal(
      await rejection(run(acts.preflight, { jobId: job.id, kind: "BURN_IN" })),
      "BadInput",
      /is a ENROL job, not BURN_IN/,
    );
    // Another site's worker (a task queue shared by mistake) refuses the job before touching anything.
    expectFinal(
      await rejection(run(activities({ site: "elsewhere" }).preflight, { jobId: job.id, kind: "ENROL" })),
      "BadInput",
      /at site act1; this worker serves elsewhere/,
    );

    expect((await api<Job>("POST", `/api/v1/jobs/${job.id}/cancel/`)).body.status).toBe("CANCELLED");
    expect((await run(acts.preflight, { jobId: job.id, kind: "ENROL" })).result).toBeNull();
  });

  it("preflight returns null for a job being cancelled (CANCELLING)", async () => {
    const { device } = await hubDevice(1);
    const job = await createJob("ENROL", [device.id]);
    await hub.db.prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
    expect((await api<Job>("POST", `/api/v1/jobs/${job.id}/cancel/`)).body.status).toBe("CANCELLING");
    expect((await run(activities().preflight, { jobId: job.id, kind: "ENROL" })).result).toBeNull();
  });

  it(
    "recordOnHub records what NetBox and Ironic show on the hub device, and a second call changes nothing",
    async () => {
      const acts = activities();
      const { device, nbd } = await hubDevice(2);
      const job = await createJob("ENROL", [device.id]);
      const planned = (await run(acts.preflight, { jobId: job.id, kind: "ENROL" })).result!.devices[0]!;
      const uuid = (await run(acts.ironicEnroll, planned)).result;
      const enrolled = { ...planned, ironicNodeUuid: uuid };
      await run(acts.netboxActivate, enrolled, { platformClass: "gb300", tags: ["gpu"] });

      await run(acts.recordOnHub, job.id, [enrolled]);
      const after = (await api<Device>("GET", `/api/v1/devices/${device.id}/`)).body;
      const slugs = nbd.tags.map((id) => nb.data.tags.find((t) => t.id === id)!.slug).sort();
      expect(after).toMatchObject({
        netbox: { status: "active" },
        platformClass: "gb300",
        ironic: {
          instance: "overcloud",
          nodeUuid: uuid,
          provisionState: "manageable",
          targetProvisionState: null,
          maintenance: false,
          lastError: null,
        },
      });
      // Tags as the NetBox reflector records them: slugs ("gpu"), not display names ("GPU").
      expect(slugs).toContain("gpu");
      expect(after.tags).toEqual(slugs);
      expect(after.version).toBeGreaterThan(device.version);

      await run(acts.recordOnHub, job.id, [enrolled]);
      expect((await api<Device>("GET", `/api/v1/devices/${device.id}/`)).body.version).toBe(after.version);
    },
    WAITING,
  );
});

// ---------------------------------------------------------------------------------------------
// Outages
// ---------------------------------------------------------------------------------------------

describe("outages", () => {
  it("a NetBox, Ironic or SLURM that does not answer is thrown as a retryable error", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const acts = activities({
      netbox: new NetboxClient({ url: dead, token: NETBOX_TOKEN, maxAttempts: 2, backoffMs: 5 }),
      ironic: { overcloud: new IronicClient({ endpoint: dead, maxAttempts: 2, backoffMs: 5 }) },
      slurm: new SlurmClient({ baseUrl: dead, user: "root", token: () => "none", maxAttempts: 2, backoffMs: 5 }),
    });
    const d = plan({ netboxId: gpuServers()[0]!.id, slurmNodeName: "gpu001" });
    expectRetryable(await rejection(run(acts.netboxCheckStaged, d)), "NetboxUnavailableError");
    expectRetryable(
      await rejection(run(acts.netboxActivate, d, { platformClass: null, tags: [] })),
      "NetboxUnavailableError",
    );
    expectRetryable(await rejection(run(acts.ironicEnroll, d)), "IronicUnavailableError");
    expectRetryable(await rejection(run(acts.ironicProvide, d)), "IronicUnavailableError");
    expectRetryable(
      await rejection(
        run(acts.slurmSubmitBurnIn, { jobId: randomUUID(), jobName: "outage", device: d, durationMinutes: 1 }),
      ),
      "SlurmUnavailableError",
    );
    expectRetryable(await rejection(run(acts.slurmWait, { slurmJobId: 1, device: d.name })), "SlurmUnavailableError");
  });
});
