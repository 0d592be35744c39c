/**
 * What a REPAIR's workflow and its operator do through the hub: the operator's signal (kept on
 * the job, audited, once), the cordons a workflow sets and lifts through its report, and the
 * topology-sync request a workflow files (once per job).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, Job, TopologySyncList } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, TEST_ADMIN_SECRET, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";

let hub: TestHub & { url: string; adminToken: string };
let reader: string;
let worker: string;
let bergenWorker: string;
let osloId: string;

beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, []);
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "bergen" }, []);
  const sites = await hub.db.prisma.site.findMany();
  osloId = sites.find((s) => s.slug === "oslo")!.id;
  reader = await clientToken(hub.url, "fleet-admin", TEST_ADMIN_SECRET, "fleet.read");
  const workerOf = async (name: string, site: string) => {
    const sat = (
      await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
        "POST",
        "/api/v1/satellites/",
        { name, siteIds: [sites.find((s) => s.slug === site)!.id], environment: "dev" },
      )
    ).body;
    const c = sat.secrets.find((x) => x.agent === "temporal-worker")!;
    return clientToken(hub.url, c.clientId, c.clientSecret, "fleet.read agent:temporal-worker");
  };
  worker = await workerOf("sys1-osl1", "oslo");
  bergenWorker = await workerOf("sys2-brg1", "bergen");
});
afterAll(() => hub.close());

const call = async <T = Job>(method: string, path: string, body?: unknown, token = hub.adminToken) => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T & { code?: string; detail?: string } };
};

let made = 0;
async function device(): Promise<string> {
  const name = `osl-gpu-${String(++made).padStart(3, "0")}`;
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, [{ name, role: "gpu-node" }]);
  return (await hub.db.prisma.device.findFirstOrThrow({ where: { name } })).id;
}
const repair = async (deviceId: string) =>
  (await call("POST", "/api/v1/jobs/", { kind: "REPAIR", deviceIds: [deviceId], params: { ticket: "OPS-7" } })).body;
const signal = (id: string, body: unknown, token = hub.adminToken) =>
  call("POST", `/api/v1/jobs/${id}/signal/`, body, token);
const report = (id: string, body: unknown, token = worker) => call("POST", `/api/v1/jobs/${id}/report/`, body, token);

describe("an operator's signal to a job", () => {
  it("is kept on a REPAIR job once, audited; the same again changes nothing, another is a 409", async () => {
    const job = await repair(await device());
    expect(job).toMatchObject({ signal: null, params: { ticket: "OPS-7", burnInMinutes: 60 } });
    const r = await signal(job.id, { outcome: "repaired", note: "reseated GPU 3" });
    expect(r.status).toBe(200);
    expect(r.body.signal).toEqual({
      outcome: "repaired",
      note: "reseated GPU 3",
      signalledBy: "fleet-admin",
      signalledAt: expect.any(String),
    });
    expect(r.body.version).toBe(job.version + 1);

    const again = await signal(job.id, { outcome: "repaired", note: "reseated GPU 3" });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(r.body.version);
    const other = await signal(job.id, { outcome: "failed" });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("job_already_signalled");
    expect((await call("GET", `/api/v1/jobs/${job.id}/`)).body.signal?.outcome).toBe("repaired");

    const audit = await call<{ items: { principal: string; diff: Record<string, { after: unknown }> }[] }>(
      "GET",
      `/api/v1/audit/?resourceId=${job.id}`,
    );
    const signalled = audit.body.items.filter((a) => "signal" in a.diff);
    expect(signalled).toHaveLength(1);
    expect(signalled[0]).toMatchObject({ principal: "fleet-admin", diff: { signal: { after: r.body.signal } } });
  });

  it("is refused to a reader, for a kind that waits for none, to an ended job, and with a bad body, changing nothing", async () => {
    const job = await repair(await device());
    expect((await signal(job.id, { outcome: "repaired" }, reader)).status).toBe(403);
    expect((await signal(job.id, { outcome: "fixed" })).status).toBe(400);
    expect((await signal(job.id, { outcome: "repaired", extra: true })).status).toBe(400);
    expect((await signal("0190a5b4-0000-7000-8000-0000000000ff", { outcome: "repaired" })).status).toBe(404);

    const burnIn = (await call("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [await device()] })).body;
    const wrong = await signal(burnIn.id, { outcome: "repaired" });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe("job_takes_no_signal");

    await call("POST", `/api/v1/jobs/${job.id}/cancel/`); // PENDING: cancelled at once
    const ended = await signal(job.id, { outcome: "repaired" });
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe("job_finished");
    expect((await call("GET", `/api/v1/jobs/${job.id}/`)).body.signal).toBeNull();
  });
});

describe("what a job's workflow changes through its report", () => {
  it("cordons and uncordons the job's devices with the job as the cordon's author, in the device history", async () => {
    const id = await device();
    const job = await repair(id);
    const cordoned = await report(job.id, { cordons: [{ deviceId: id, cordoned: true, reason: "repair OPS-7" }] });
    expect(cordoned.status, JSON.stringify(cordoned.body)).toBe(200);
    const dev = (await call<Device>("GET", `/api/v1/devices/${id}/`)).body;
    expect(dev).toMatchObject({ cordoned: true, cordonReason: "repair OPS-7", cordonedBy: `job:${job.name}` });
    // The same report again (a retried activity) changes nothing.
    await report(job.id, { cordons: [{ deviceId: id, cordoned: true, reason: "repair OPS-7" }] });
    expect((await call<Device>("GET", `/api/v1/devices/${id}/`)).body.version).toBe(dev.version);

    await report(job.id, { cordons: [{ deviceId: id, cordoned: false }] });
    expect((await call<Device>("GET", `/api/v1/devices/${id}/`)).body).toMatchObject({
      cordoned: false,
      cordonReason: null,
    });
    const history = await call<{ items: { field: string; source: string }[] }>(
      "GET",
      `/api/v1/devices/${id}/history/?field=cordoned`,
    );
    expect(history.body.items.map((h) => h.source)).toEqual([`job:${job.name}`, `job:${job.name}`]);
  });

  it("cordons only the job's own devices, and only from its own site's worker", async () => {
    const [mine, other] = [await device(), await device()];
    const job = await repair(mine);
    const foreign = await report(job.id, { cordons: [{ deviceId: other, cordoned: true, reason: "repair OPS-7" }] });
    expect(foreign.status).toBe(422);
    expect(foreign.body.code).toBe("device_not_in_job");
    expect(
      (await report(job.id, { cordons: [{ deviceId: mine, cordoned: true, reason: "repair OPS-7" }] }, bergenWorker))
        .status,
    ).toBe(403);
    expect(
      (await report(job.id, { cordons: [{ deviceId: mine, cordoned: true, reason: "repair OPS-7" }] }, hub.adminToken))
        .status,
    ).toBe(403);
    for (const d of [mine, other])
      expect((await call<Device>("GET", `/api/v1/devices/${d}/`)).body.cordoned).toBe(false);
    // A cordon without its reason is refused as bad input (it once reached the table's check: a 500)...
    const bare = await report(job.id, { cordons: [{ deviceId: mine, cordoned: true }] });
    expect([bare.status, (bare.body as { errors?: { path: string }[] }).errors?.map((e) => e.path)]).toEqual([
      400,
      ["body.cordons.0.reason"],
    ]);
    // ...and the job's own device, from its own site's worker, is cordoned; the other is not.
    const own = await report(job.id, { cordons: [{ deviceId: mine, cordoned: true, reason: "repair OPS-7" }] });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await call<Device>("GET", `/api/v1/devices/${mine}/`)).body.cordoned).toBe(true);
    expect((await call<Device>("GET", `/api/v1/devices/${other}/`)).body.cordoned).toBe(false);
  });

  it("takes cordons only from a repair or a node swap and a topology-sync request only from a tray's removal (422, nothing written)", async () => {
    const id = await device();
    const burnIn = (await call("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [id] })).body;
    const cordons = await report(burnIn.id, { cordons: [{ deviceId: id, cordoned: true, reason: "not a repair" }] });
    expect([cordons.status, cordons.body.code]).toEqual([422, "not_a_repair"]);
    expect((await call<Device>("GET", `/api/v1/devices/${id}/`)).body.cordoned).toBe(false);

    // Asked at a site with a region, where an unenrolment's request would be filed.
    await hub.db.prisma.site.update({ where: { id: osloId }, data: { region: "eu-north-1" } });
    try {
      const list = () => call<TopologySyncList>("GET", `/api/v1/sites/${osloId}/topology-sync/`);
      const before = (await list()).body.items.length;
      for (const job of [burnIn, await repair(await device())]) {
        const r = await report(job.id, { topologySync: { reason: "not a removal" } });
        expect([r.status, r.body.code]).toEqual([422, "not_a_tray_removal"]);
      }
      expect((await list()).body.items).toHaveLength(before);
    } finally {
      await hub.db.prisma.site.update({ where: { id: osloId }, data: { region: null } });
    }
    await call("POST", `/api/v1/jobs/${burnIn.id}/cancel/`);
  });

  it("files the site's topology-sync request once per job; a site without a region is a 422 filing nothing", async () => {
    const job = (await call("POST", "/api/v1/jobs/", { kind: "UNENROL", deviceIds: [await device()] })).body;
    const list = () => call<TopologySyncList>("GET", `/api/v1/sites/${osloId}/topology-sync/`);
    const before = (await list()).body.items.length;
    const refused = await report(job.id, { topologySync: { reason: "unenrolment of osl-gpu" } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("site_not_topology_target");
    expect((await list()).body.items).toHaveLength(before);

    await hub.db.prisma.site.update({ where: { id: osloId }, data: { region: "eu-north-1" } });
    for (let i = 0; i < 2; i++)
      expect((await report(job.id, { topologySync: { reason: "unenrolment of osl-gpu" } })).status).toBe(200);
    const filed = (await list()).body.items;
    expect(filed).toHaveLength(before + 1);
    expect(filed.at(-1)).toMatchObject({
      region: "eu-north-1",
      reason: "unenrolment of osl-gpu",
      status: "REQUESTED",
      requestedBy: expect.stringMatching(/^temporal-worker-sys1-osl1/),
    });
  });
});
