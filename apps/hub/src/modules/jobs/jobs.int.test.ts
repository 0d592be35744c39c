import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "@fm/domain";
import { startOAuthTestHub, TEST_ADMIN_SECRET, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import pg from "pg";
import { bearer, clientToken } from "@fm/test-support/process";
import { adminQuery } from "@fm/test-support/postgres";
import { eventually } from "@fm/test-support/wait";

let hub: TestHub & { url: string; adminToken: string };
let reader: string;
let elsewhere: string;

beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, []);
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "bergen" }, [{ name: "brg-gpu-0", role: "gpu-node" }]);
  elsewhere = (await hub.db.prisma.device.findFirstOrThrow({ where: { name: "brg-gpu-0" } })).id;
  await hub.db.prisma.device.update({ where: { id: elsewhere }, data: { netboxStatus: "staged" } });
  reader = await clientToken(hub.url, "fleet-admin", TEST_ADMIN_SECRET, "fleet.read");
});
afterAll(() => hub.close());

let made = 0;
/** `n` new GPU devices at site oslo for one test, NetBox `staged` (ready to enrol) or `active`. */
async function devices(n: number, status: "staged" | "active" = "staged"): Promise<string[]> {
  const names = Array.from({ length: n }, () => `osl-gpu-${String(++made).padStart(3, "0")}`);
  const gpus = names.map((name) => ({ name, role: "gpu-node" as const }));
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, gpus);
  const rows = await hub.db.prisma.device.findMany({ where: { name: { in: names } } });
  const ids = names.map((name) => rows.find((r) => r.name === name)!.id);
  if (status === "staged")
    await hub.db.prisma.device.updateMany({ where: { id: { in: ids } }, data: { netboxStatus: "staged" } });
  return ids;
}

const call = async <T = Job>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  token = hub.adminToken,
) => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as T & { code?: string; detail?: string; errors?: { path: string }[] },
  };
};
const jobCount = () => hub.db.prisma.job.count();
const jobsOf = (deviceId: string) => hub.db.prisma.jobDevice.count({ where: { deviceId } });

describe("jobs API", () => {
  it("creates an ENROL job: PENDING, generated name, defaults, and a feed event", async () => {
    const staged = await devices(1);
    const [active] = await devices(1, "active");
    const r = await call("POST", "/api/v1/jobs/", {
      kind: "ENROL",
      deviceIds: [staged[0]],
      params: { configureDhcp: true },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: "ENROL",
      status: "PENDING",
      deviceIds: [staged[0]],
      params: { configureDhcp: true },
      steps: [],
      progress: 0,
      error: null,
      createdBy: "fleet-admin",
    });
    expect(r.body.name).toMatch(/^enrol-[a-z]+-[a-z]+-[0-9a-f]{4}$/);
    expect((await call("GET", `/api/v1/jobs/${r.body.id}/`)).body).toEqual(r.body);
    const burn = await call("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [active] });
    expect(burn.status).toBe(201);
    expect(burn.body.params).toEqual({ durationMinutes: 60, tests: ["hardware-tests"] });
    const feed = (
      await call<{ items: { type: string; resourceId: string }[] }>("GET", "/api/v1/feeds/inventory/?limit=1000")
    ).body.items;
    expect(feed.filter((e) => e.type === "job.created").map((e) => e.resourceId)).toEqual(
      expect.arrayContaining([r.body.id, burn.body.id]),
    );
    const list = await call<{ items: Job[]; count: number }>(
      "GET",
      `/api/v1/jobs/?status=PENDING&kind=ENROL&site=oslo&device=${staged[0]}`,
    );
    expect(list.body.items.map((j) => j.id)).toEqual([r.body.id]);
    expect(list.body.count).toBe(1);
  });

  it("takes a NODE_SWAP of one failed tray and a spare it knows at the same site; refuses anything else with a 422, creating nothing", async () => {
    const [failed, spare] = await devices(2, "active");
    const before = await jobCount();
    const swap = (deviceIds: string[], spareDeviceId: string) =>
      call("POST", "/api/v1/jobs/", { kind: "NODE_SWAP", deviceIds, params: { spareDeviceId } });
    const refusals = [
      await swap([failed!, spare!], spare!),
      await swap([failed!], "0190a5b4-0000-7000-8000-0000000000fe"),
      await swap([failed!], failed!),
      await swap([failed!], elsewhere),
    ];
    expect(refusals.map((r) => [r.status, r.body.code, r.body.errors?.[0]?.path])).toEqual([
      [422, "node_swap_one_device", "body.deviceIds"],
      [422, "unknown_device", "body.params.spareDeviceId"],
      [422, "spare_is_failed_device", "body.params.spareDeviceId"],
      [422, "devices_span_sites", "body.params.spareDeviceId"],
    ]);
    expect(await jobCount()).toBe(before);
    const created = await swap([failed!], spare!);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: "NODE_SWAP", deviceIds: [failed], params: { spareDeviceId: spare } });
  });

  it("a running swap holds its spare: no second swap into another tray, no other job on it, no swap of a busy spare", async () => {
    const [failed, other, spare, busySpare] = await devices(4, "active");
    const post = (kind: string, deviceIds: string[], params: unknown = {}) =>
      call("POST", "/api/v1/jobs/", { kind, deviceIds, params });
    // A UUID is one UUID however it is written.
    const first = await post("NODE_SWAP", [failed!], { spareDeviceId: spare!.toUpperCase() });
    expect(first.status).toBe(201);
    const before = await jobCount();
    const second = await post("NODE_SWAP", [other!], { spareDeviceId: spare });
    expect([second.status, second.body.code, second.body.errors?.[0]?.path]).toEqual([
      409,
      "device_has_active_job",
      "body.params.spareDeviceId",
    ]);
    expect(second.body.detail).toContain(first.body.name);
    const onSpare = await post("BURN_IN", [spare!]);
    expect([onSpare.status, onSpare.body.code]).toEqual([409, "device_has_active_job"]);
    expect(onSpare.body.detail).toContain(`is the spare of ${first.body.name}`);
    // A spare already in another job cannot be swapped in.
    const burn = await post("BURN_IN", [busySpare!]);
    expect(burn.status).toBe(201);
    const busy = await post("NODE_SWAP", [other!], { spareDeviceId: busySpare });
    expect([busy.status, busy.body.code]).toEqual([409, "device_has_active_job"]);
    expect(busy.body.detail).toContain(burn.body.name);
    expect(await jobCount()).toBe(before + 1);
    // Ended, the swap lets its spare go.
    expect((await call("POST", `/api/v1/jobs/${first.body.id}/cancel/`)).status).toBe(200);
    expect((await post("NODE_SWAP", [other!], { spareDeviceId: spare })).status).toBe(201);
  });

  it("refuses a second active job on a device, an enrol of an active device, and bad input, creating nothing", async () => {
    const staged = await devices(2);
    const [active] = await devices(1, "active");
    expect((await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] })).status).toBe(201);
    const before = await jobCount();
    expect((await call("POST", "/api/v1/jobs/", { kind: "TEARDOWN", deviceIds: [staged[0]] })).body.code).toBe(
      "device_state_conflict",
    );
    const second = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[1], staged[0]] });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("device_has_active_job");
    const enrolActive = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [active] });
    expect(enrolActive.status).toBe(409);
    expect(enrolActive.body.code).toBe("device_state_conflict");
    const noImage = await call("POST", "/api/v1/jobs/", { kind: "REIMAGE", deviceIds: [active], params: {} });
    expect(noImage.status).toBe(400);
    expect(noImage.body.errors!.map((e) => e.path)).toContain("body.params.image");
    expect(
      (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[1]], params: { bogus: 1 } })).status,
    ).toBe(400);
    expect((await call("POST", "/api/v1/jobs/", { kind: "DANCE", deviceIds: [staged[1]] })).status).toBe(400);
    expect((await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [] })).status).toBe(400);
    expect((await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[1], elsewhere] })).body.code).toBe(
      "devices_span_sites",
    );
    expect(
      (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: ["0190a5b4-0000-7000-8000-0000000000ff"] }))
        .status,
    ).toBe(422);
    expect((await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[1]] }, {}, reader)).status).toBe(
      403,
    );
    expect(await jobCount()).toBe(before);
  });

  it("the database keeps one active job per device when requests race", async () => {
    const staged = await devices(1);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await hub.db.prisma.jobDevice.count({ where: { deviceId: staged[0], active: true } })).toBe(1);
  });

  it("creates jobs for 40 different devices at once: each is created or shed with a 503 to retry, never a 500", async () => {
    const bulk = (await devices(40)).map((id) => ({ id }));
    const create = (id: string) =>
      call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [id] }, { "idempotency-key": `bulk-${id}` });
    let results = await Promise.all(bulk.map((d) => create(d.id)));
    // The test hub's pool has 5 connections and a 1 s wait: a burst of 40 is partly shed.
    expect(results.map((r) => r.status).filter((st) => st !== 201 && st !== 503)).toEqual([]);
    for (const shed of results.filter((r) => r.status === 503)) expect(shed.body.code).toBe("database_busy");
    // As a client should: after Retry-After, again with the same key (which may still be
    // marked in progress for a moment when the pool was too busy to release it at once).
    const again = (r: (typeof results)[number]) =>
      r.status === 503 || (r.status === 409 && r.body.code === "idempotency_key_in_progress");
    for (let round = 0; round < 10 && results.some(again); round++) {
      await new Promise((r) => setTimeout(r, 1000));
      results = await Promise.all(
        bulk.map((d, i) => (again(results[i]!) ? create(d.id) : Promise.resolve(results[i]!))),
      );
    }
    expect(results.map((r) => r.status).filter((st) => st !== 201)).toEqual([]);
    expect(new Set(results.map((r) => r.body.name)).size).toBe(40);
    expect(
      await hub.db.prisma.jobDevice.count({ where: { deviceId: { in: bulk.map((d) => d.id) }, active: true } }),
    ).toBe(40);
  });

  it("replays an Idempotency-Key: the first status and body, marked Idempotent-Replayed; another body is a 422", async () => {
    const [d, other] = (await devices(2)) as [string, string];
    const key = { "idempotency-key": `enrol-${d}` };
    const first = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d] }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d] }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.body).toEqual(first.body);
    expect(await jobsOf(d)).toBe(1); // run once
    const reused = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [other] }, key);
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe("idempotency_key_reused");
    expect(await jobsOf(other)).toBe(0);
  });

  it("while the first request with a key is still running, a repeat is a 409 with Retry-After", async () => {
    const [d] = (await devices(1)) as [string];
    const request = () =>
      call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d] }, { "idempotency-key": `slow-${d}` });
    // Another session locks the jobs table: the first request stops inside its work, its key
    // recorded as in progress.
    const blocker = new pg.Client({ connectionString: hub.database.url });
    await blocker.connect();
    let first: ReturnType<typeof request> | undefined;
    try {
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE");
      first = request();
      await eventually(
        async () => {
          const waiting = await adminQuery(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
            [hub.database.name],
          );
          expect((waiting.rows[0] as { n: number }).n).toBe(1);
        },
        10_000,
        20,
      );
      const repeat = await request();
      expect(repeat.status).toBe(409);
      expect(repeat.body.code).toBe("idempotency_key_in_progress");
      expect(Number(repeat.headers.get("retry-after"))).toBeGreaterThan(0);
      await blocker.query("COMMIT");
      const done = await first;
      expect(done.status).toBe(201);
      // Once it has finished, the repeat gets its response.
      const replay = await request();
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.id).toBe(done.body.id);
      expect(await jobsOf(d)).toBe(1);
    } finally {
      await blocker.end(); // releases the lock if the test failed while holding it
      await first?.catch(() => {});
    }
  });

  it("cancels: PENDING ends at once and frees its devices; running becomes CANCELLING; ended is a 409", async () => {
    const staged = await devices(1);
    const job = (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] })).body;
    const cancelled = await call("POST", `/api/v1/jobs/${job.id}/cancel/`);
    expect(cancelled.body).toMatchObject({ status: "CANCELLED" });
    expect(cancelled.body.finishedAt).not.toBeNull();
    expect((await call("POST", `/api/v1/jobs/${job.id}/cancel/`)).body.status).toBe("CANCELLED");
    const again = await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] });
    expect(again.status).toBe(201);
    await hub.db.prisma.job.update({ where: { id: again.body.id }, data: { status: "RUNNING" } });
    const cancelling = await call("POST", `/api/v1/jobs/${again.body.id}/cancel/`);
    expect(cancelling.body).toMatchObject({ status: "CANCELLING" });
    expect(cancelling.body.cancelRequestedAt).not.toBeNull();
    // Still active: the device stays claimed until the workflow confirms.
    expect((await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] })).status).toBe(409);
    await hub.db.prisma.job.update({ where: { id: again.body.id }, data: { status: "SUCCEEDED" } });
    expect((await call("POST", `/api/v1/jobs/${again.body.id}/cancel/`)).status).toBe(409);
    expect((await call("POST", `/api/v1/jobs/0190a5b4-0000-7000-8000-0000000000ff/cancel/`)).status).toBe(404);
  });

  describe("reports from the site's agents", () => {
    let agents: Record<string, string>;
    let bergenWorkflow: string;
    beforeAll(async () => {
      const token = async (name: string, siteSlug: string) => {
        const site = (await call<{ items: { id: string }[] }>("GET", `/api/v1/sites/?slug=${siteSlug}`)).body.items[0]!
          .id;
        const sat = (
          await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
            "POST",
            "/api/v1/satellites/",
            { name, siteIds: [site], environment: "dev" },
          )
        ).body;
        const of = async (agent: string) => {
          const c = sat.secrets.find((x) => x.agent === agent)!;
          return clientToken(hub.url, c.clientId, c.clientSecret, `fleet.read agent:${agent}`);
        };
        return { workflow: await of("workflow"), worker: await of("temporal-worker"), netbox: await of("netbox") };
      };
      const oslo = await token("sys1-osl1", "oslo");
      agents = { workflow: oslo.workflow, worker: oslo.worker, netbox: oslo.netbox };
      bergenWorkflow = (await token("sys2-brg1", "bergen")).workflow;
    });

    it("walks a job through SUBMITTED, RUNNING and SUCCEEDED with steps, and records device observations once", async () => {
      const staged = await devices(1);
      const job = (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [staged[0]] })).body;
      const report = (body: unknown, token = agents.workflow!) =>
        call("POST", `/api/v1/jobs/${job.id}/report/`, body, {}, token);
      const submitted = await report({ status: "SUBMITTED", workflowId: job.id });
      expect(submitted.body).toMatchObject({ status: "SUBMITTED", workflowId: job.id, version: job.version + 1 });
      // The same report again (an agent restarted before it saw the answer) changes nothing.
      expect((await report({ status: "SUBMITTED", workflowId: job.id })).body.version).toBe(submitted.body.version);
      const steps = [
        { name: "netbox-check", status: "SUCCEEDED" },
        { name: "ironic-enroll", status: "RUNNING", progress: 0.5 },
      ];
      const running = await report({ status: "RUNNING", steps, progress: 0.25 });
      expect(running.body).toMatchObject({ status: "RUNNING", steps, progress: 0.25 });
      expect((await report({ workflowId: "another-workflow" })).status).toBe(409);
      expect((await report({ status: "PENDING" })).status).toBe(400);

      const nodeUuid = "0190a5b4-0000-7000-8000-00000000abcd";
      const observation = {
        deviceId: staged[0],
        netbox: { status: "active", platformClass: "gb300", tags: ["enrolled"] },
        ironic: {
          instance: "undercloud",
          nodeUuid,
          provisionState: "available",
          targetProvisionState: null,
          powerState: "power off",
          maintenance: false,
          lastError: null,
        },
      };
      const observed = await report({ devices: [observation] }, agents.worker);
      expect(observed.status).toBe(200);
      const device = (
        await call<{
          netbox: { status: string };
          platformClass: string;
          tags: string[];
          ironic: { nodeUuid: string; provisionState: string };
        }>("GET", `/api/v1/devices/${staged[0]}/`)
      ).body;
      expect(device).toMatchObject({
        netbox: { status: "active" },
        platformClass: "gb300",
        tags: ["enrolled"],
        ironic: { nodeUuid, provisionState: "available" },
      });
      const history = async () =>
        (
          await call<{ items: { field: string; source: string }[] }>(
            "GET",
            `/api/v1/devices/${staged[0]}/history/?limit=100`,
          )
        ).body.items.filter((h) => h.source === `job:${job.name}`);
      const entries = (await history()).length;
      expect(entries).toBeGreaterThan(0);
      await report({ devices: [observation] }, agents.worker);
      expect((await history()).length).toBe(entries);

      const done = await report({ status: "SUCCEEDED", steps: steps.map((s) => ({ ...s, status: "SUCCEEDED" })) });
      expect(done.body).toMatchObject({ status: "SUCCEEDED", progress: 1 });
      expect(done.body.finishedAt).not.toBeNull();
      expect((await report({ status: "SUCCEEDED" })).status).toBe(200);
      expect((await report({ status: "FAILED", error: { message: "late" } })).status).toBe(409);
      const feed = (
        await call<{ items: { type: string; resourceId: string }[] }>("GET", "/api/v1/feeds/inventory/?limit=1000")
      ).body.items;
      expect(feed.filter((e) => e.type === "job.updated" && e.resourceId === job.id).length).toBe(3);
      // The device is free again.
      expect((await call("POST", "/api/v1/jobs/", { kind: "UNENROL", deviceIds: [staged[0]] })).status).toBe(201);
    });

    it("a job's observation of a device opens and closes that device's discrepancies", async () => {
      const [d] = (await devices(1)) as [string];
      const site = (await hub.db.prisma.device.findUniqueOrThrow({ where: { id: d } })).siteId;
      const job = (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d] })).body;
      const report = (body: unknown) => call("POST", `/api/v1/jobs/${job.id}/report/`, body, {}, agents.worker);
      const open = async () =>
        (
          await call<{ items: { kind: string; deviceId: string | null }[] }>(
            "GET",
            `/api/v1/sites/${site}/discrepancies/?limit=1000`,
          )
        ).body.items
          .filter((x) => x.deviceId === d)
          .map((x) => x.kind);
      const ironic = {
        instance: "overcloud",
        nodeUuid: "0190a5b4-0000-7000-8000-00000000beef",
        provisionState: "available",
        targetProvisionState: null,
        powerState: "power off",
        maintenance: false,
        lastError: null,
      };
      expect(await open()).toEqual([]);
      // Ironic has the node available while NetBox still says staged: a disagreement, at once.
      expect((await report({ devices: [{ deviceId: d, ironic }] })).status).toBe(200);
      expect(await open()).toEqual(["ironic_available_netbox_staged"]);
      // The workflow sets NetBox active: they agree again.
      expect((await report({ devices: [{ deviceId: d, netbox: { status: "active" }, ironic }] })).status).toBe(200);
      expect(await open()).toEqual([]);
    });

    it("only the job's own site's workflow agent or worker may report, and only on the job's devices", async () => {
      const [d] = (await devices(1)) as [string];
      const [active] = await devices(1, "active");
      const job = (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d] })).body;
      const report = (body: unknown, token: string) => call("POST", `/api/v1/jobs/${job.id}/report/`, body, {}, token);
      const other = await report({ status: "SUBMITTED" }, bergenWorkflow);
      expect(other.body.code, JSON.stringify(other.body)).toBe("site_not_served");
      expect((await report({ status: "SUBMITTED" }, agents.netbox!)).body.code).toBe("agent_not_allowed");
      expect((await report({ status: "SUBMITTED" }, hub.adminToken)).status).toBe(403);
      expect((await report({ status: "SUBMITTED" }, reader)).status).toBe(403);
      const foreign = await report({ devices: [{ deviceId: active, netbox: { status: "offline" } }] }, agents.worker!);
      expect(foreign.status).toBe(422);
      expect(foreign.body.code).toBe("device_not_in_job");
      expect((await report({}, agents.workflow!)).status).toBe(400);
      const after = (await call("GET", `/api/v1/jobs/${job.id}/`)).body;
      expect(after).toMatchObject({ status: "PENDING", version: job.version });
      expect((await call<{ netbox: { status: string } }>("GET", `/api/v1/devices/${active}/`)).body.netbox.status).toBe(
        "active",
      );
    });

    it("lists active jobs of a site for the workflow agent", async () => {
      const [p, c, f] = (await devices(3)) as [string, string, string];
      const enrol = async (id: string) =>
        (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [id] })).body;
      const pending = await enrol(p);
      const cancelled = await enrol(c);
      expect((await call("POST", `/api/v1/jobs/${cancelled.id}/cancel/`)).body.status).toBe("CANCELLED");
      const finished = await enrol(f);
      const report = (body: unknown) => call("POST", `/api/v1/jobs/${finished.id}/report/`, body, {}, agents.workflow);
      expect((await report({ status: "SUBMITTED", workflowId: finished.id })).status).toBe(200);
      expect((await report({ status: "SUCCEEDED" })).body.status).toBe("SUCCEEDED");

      const activeJobs = (
        await call<{ items: Job[] }>(
          "GET",
          "/api/v1/jobs/?site=oslo&active=true&limit=1000",
          undefined,
          {},
          agents.workflow,
        )
      ).body.items;
      expect(activeJobs.map((j) => j.id)).toContain(pending.id);
      expect(activeJobs.map((j) => j.id)).not.toContain(cancelled.id);
      expect(activeJobs.map((j) => j.id)).not.toContain(finished.id);
      expect(activeJobs.every((j) => ["PENDING", "SUBMITTED", "RUNNING", "CANCELLING"].includes(j.status))).toBe(true);
      const ended = (await call<{ items: Job[] }>("GET", "/api/v1/jobs/?site=oslo&active=false&limit=1000")).body.items;
      expect(ended.map((j) => j.id)).toEqual(expect.arrayContaining([cancelled.id, finished.id]));
      expect(ended.map((j) => j.id)).not.toContain(pending.id);
      expect(ended.every((j) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(j.status))).toBe(true);
      expect((await call<{ items: Job[] }>("GET", "/api/v1/jobs/?active=false&status=PENDING")).body.items).toEqual([]);
    });
  });
});
