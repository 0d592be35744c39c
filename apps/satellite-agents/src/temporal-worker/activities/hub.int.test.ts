/**
 * The hub activities under Temporal's MockActivityEnvironment: an in-process hub on PostgreSQL
 * (called as the satellite's Temporal worker), with the NetBox test server and a real Ironic
 * (fake-hardware) for what recordOnHub reads back. The assertions read the hub's API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HubClient, IronicClient, NetboxClient } from "@fm/clients";
import type { Device, Job } from "@fm/domain";
import { seedNetboxOnlyDevices, startOAuthTestHub, type TestHub } from "@fm/hub/testing";
import { startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { startNetboxServer, type DeviceRecord, type NetboxServer } from "@fm/test-support/netbox-server";
import { bearer, clientToken } from "@fm/test-support/process";
import {
  DEFAULT_REDFISH,
  NETBOX_TOKEN,
  WAITING,
  activityFleet,
  expectFinal,
  gpuServers,
  rejection,
  run,
} from "./activity-testing.ts";
import type { ActivityDeps } from "./deps.ts";
import { createActivities } from "./index.ts";

let ironic: IronicPeer;
let nb: NetboxServer;
let hub: TestHub & { url: string; adminToken: string };
let gpus: ReturnType<typeof gpuServers>;
let clients: Pick<ActivityDeps, "hub" | "netbox" | "ironic">;

/** The activities as the worker builds them, on the real clients; `over` replaces any dependency. */
const activities = (over: Partial<ActivityDeps> = {}) =>
  createActivities({
    site: "act1",
    ...clients,
    ironicDriver: "fake-hardware",
    slurmDeviceNamePrefix: "",
    redfish: DEFAULT_REDFISH,
    burnIn: { images: { defaultByArch: {} }, command: "sleep 1" },
    pollIntervalMs: 100,
    ...over,
  });

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
const netboxDevice = (status: string): DeviceRecord => gpus.take(status);

beforeAll(async () => {
  [ironic, nb, hub] = await Promise.all([
    startIronic(),
    startNetboxServer({ token: NETBOX_TOKEN, data: activityFleet() }),
    startOAuthTestHub(),
  ]);
  gpus = gpuServers(nb);

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
  const workerToken = await clientToken(
    hub.url,
    worker.clientId,
    worker.clientSecret,
    "fleet.read agent:temporal-worker",
  );
  clients = {
    hub: new HubClient({ baseUrl: hub.url, token: async () => workerToken }),
    netbox: new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 }),
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
  };
}, 180_000);

afterAll(async () => {
  await Promise.all([ironic?.stop(), nb?.stop(), hub?.close()].map((p) => Promise.resolve(p).catch(() => {})));
}, 60_000);

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
      site: {
        slug: "act1",
        slurmEnabled: true,
        openstackSlurmEnabled: false,
        configureDhcp: true,
        platformClassActivityReady: false,
        topologyRegion: null,
      },
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
          deviceRoleId: device.role!.id,
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
