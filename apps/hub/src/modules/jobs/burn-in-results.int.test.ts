import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BurnInDeviceResult, Device, DeviceHistoryEntry, Job } from "@fm/domain";
import { startOAuthTestHub, TEST_ADMIN_SECRET, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import { bearer, clientToken } from "@fm/test-support/process";

let hub: TestHub & { url: string; adminToken: string };
let reader: string;
let worker: string;

const call = async <T = Job>(method: string, path: string, body?: unknown, token = hub.adminToken) => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T & { code?: string; detail?: string } };
};

beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "reykjavik" }, [
    { name: "rvk-gpu-1", role: "gpu-node" },
    { name: "rvk-gpu-2", role: "gpu-node" },
    { name: "rvk-gpu-3", role: "gpu-node" },
  ]);
  reader = await clientToken(hub.url, "fleet-admin", TEST_ADMIN_SECRET, "fleet.read");
  const site = (await call<{ items: { id: string }[] }>("GET", "/api/v1/sites/?slug=reykjavik")).body.items[0]!.id;
  const sat = (
    await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "POST",
      "/api/v1/satellites/",
      {
        name: "sys1-rvk1",
        siteIds: [site],
        environment: "dev",
      },
    )
  ).body;
  const c = sat.secrets.find((x) => x.agent === "temporal-worker")!;
  worker = await clientToken(hub.url, c.clientId, c.clientSecret, "fleet.read agent:temporal-worker");
});
afterAll(() => hub.close());

const idOf = async (name: string) => (await hub.db.prisma.device.findFirstOrThrow({ where: { name } })).id;

function result(deviceId: string, passed: boolean): BurnInDeviceResult {
  return {
    deviceId,
    status: passed ? "PASSED" : "FAILED",
    tests: [
      {
        test: "gpu-fryer",
        passed,
        exitCode: passed ? 0 : 1,
        image: "/vast/enroot-cache/gpu-fryer.sqsh",
        architecture: "x86_64",
        figures: {
          gpus: [{ index: 0, tflops: passed ? 51.2 : 38.7, temperatureMaxC: passed ? 55 : 89, throttled: !passed }],
          xids: passed ? [] : [{ pciAddress: "0000:1b:00", code: 79, message: "GPU has fallen off the bus." }],
          reasons: passed ? [] : ["GPU 0 - GPU is throttled. Check the throttling reasons and temperatures"],
        },
        ...(passed ? {} : { message: "gpu-fryer exited 1" }),
        artifacts: [{ name: "gpu-fryer.log", url: "s3://fm-artifacts/jobs/x/gpu-fryer.log", bytes: 1200 }],
      },
    ],
  };
}

describe("burn-in results", () => {
  let job: Job;
  let good: string;
  let bad: string;

  it("a burn-in's worker reports results per device: on the job, on each device, in its history", async () => {
    [good, bad] = [await idOf("rvk-gpu-1"), await idOf("rvk-gpu-2")];
    job = (
      await call("POST", "/api/v1/jobs/", {
        kind: "BURN_IN",
        deviceIds: [good, bad],
        params: { tests: ["gpu-fryer"], durationMinutes: 5 },
      })
    ).body;
    expect(job.burnIn).toEqual([]);
    const report = (body: unknown) => call("POST", `/api/v1/jobs/${job.id}/report/`, body, worker);
    const results = [result(good, true), result(bad, false)];
    const r = await report({ burnIn: results });
    expect(r.status).toBe(200);
    expect(r.body.burnIn).toEqual([...results].sort((a, b) => a.deviceId.localeCompare(b.deviceId)));
    // The same report again changes nothing (no new version, no second history entry).
    expect((await report({ burnIn: results })).body.version).toBe(r.body.version);

    const device = (await call<Device>("GET", `/api/v1/devices/${bad}/`, undefined, reader)).body;
    expect(device.burnIn).toMatchObject({ status: "FAILED", jobId: job.id });
    const history = (await call<{ items: DeviceHistoryEntry[] }>("GET", `/api/v1/devices/${bad}/history/?field=burnIn`))
      .body.items;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      source: `job:${job.name}`,
      oldValue: null,
      newValue: { status: "FAILED", jobId: job.id },
    });
  });

  it("filters devices by their last burn-in", async () => {
    const names = async (q: string) =>
      (
        await call<{ items: Device[] }>("GET", `/api/v1/devices/?site=reykjavik&burnIn=${q}`, undefined, reader)
      ).body.items
        .map((d) => d.name)
        .sort();
    expect(await names("failed")).toEqual(["rvk-gpu-2"]);
    expect(await names("passed")).toEqual(["rvk-gpu-1"]);
    expect(await names("none")).toEqual(["rvk-gpu-3"]);
    expect((await call("GET", "/api/v1/devices/?burnIn=maybe", undefined, reader)).status).toBe(400);
  });

  it("refuses results that are not a burn-in's or not about its devices, and malformed ones (4xx, nothing written)", async () => {
    const other = await idOf("rvk-gpu-3");
    const report = (body: unknown) => call("POST", `/api/v1/jobs/${job.id}/report/`, body, worker);
    const foreign = await report({ burnIn: [result(other, true)] });
    expect([foreign.status, foreign.body.code]).toEqual([422, "device_not_in_job"]);
    expect((await report({ burnIn: [{ ...result(good, true), status: "GREAT" }] })).status).toBe(400);
    // A status its tests do not give, and a device reported twice.
    expect((await report({ burnIn: [{ ...result(good, false), status: "PASSED" }] })).status).toBe(400);
    expect((await report({ burnIn: [result(good, true), result(good, false)] })).status).toBe(400);
    expect((await call("POST", `/api/v1/jobs/${job.id}/report/`, { burnIn: [result(good, true)] })).status).toBe(403);
    const unenrol = (await call("POST", "/api/v1/jobs/", { kind: "UNENROL", deviceIds: [other] })).body;
    const wrongKind = await call(
      "POST",
      `/api/v1/jobs/${unenrol.id}/report/`,
      { burnIn: [result(other, true)] },
      worker,
    );
    expect([wrongKind.status, wrongKind.body.code]).toEqual([422, "not_a_burn_in"]);
    expect((await call<Device>("GET", `/api/v1/devices/${other}/`)).body.burnIn).toBeNull();
    await call("POST", `/api/v1/jobs/${unenrol.id}/cancel/`);
  });

  it("RELEASE refuses a device whose last burn-in failed (409) unless overridden with a reason, which the audit keeps", async () => {
    await call("POST", `/api/v1/jobs/${job.id}/report/`, { status: "SUBMITTED", workflowId: job.id }, worker);
    await call(
      "POST",
      `/api/v1/jobs/${job.id}/report/`,
      { status: "FAILED", error: { message: "burn-in failed" } },
      worker,
    );
    const refused = await call("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [good, bad] });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("burn_in_failed");
    expect(refused.body.detail).toMatch(/rvk-gpu-2 failed its last burn-in/);
    expect((await call("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [good] })).status).toBe(201);
    const blank = await call("POST", "/api/v1/jobs/", {
      kind: "RELEASE",
      deviceIds: [bad],
      params: { burnInOverride: { reason: "  " } },
    });
    expect(blank.status).toBe(400);

    const released = await call("POST", "/api/v1/jobs/", {
      kind: "RELEASE",
      deviceIds: [bad],
      params: { burnInOverride: { reason: "vendor confirmed the throttling was a sensor fault" } },
    });
    expect(released.status).toBe(201);
    const audit = (
      await call<{ items: { action: string; principal: string; resourceId: string; diff: unknown }[] }>(
        "GET",
        `/api/v1/audit/?action=device.burn_in_override&resourceId=${bad}`,
      )
    ).body.items;
    expect(audit).toHaveLength(1);
    expect(audit[0]!.principal).toBe("fleet-admin");
    expect(JSON.stringify(audit[0]!.diff)).toContain("vendor confirmed the throttling was a sensor fault");
    expect(JSON.stringify(audit[0]!.diff)).toContain(released.body.id);
  });

  it("a repair's re-test result is the device's last burn-in: a device repaired after a failed burn-in is released without an override", async () => {
    const id = await idOf("rvk-gpu-3");
    const end = async (j: Job, status: "SUCCEEDED" | "FAILED") => {
      await call("POST", `/api/v1/jobs/${j.id}/report/`, { status: "SUBMITTED", workflowId: j.id }, worker);
      expect((await call("POST", `/api/v1/jobs/${j.id}/report/`, { status }, worker)).status).toBe(200);
    };
    const burnIn = (await call("POST", "/api/v1/jobs/", { kind: "BURN_IN", deviceIds: [id] })).body;
    await call("POST", `/api/v1/jobs/${burnIn.id}/report/`, { burnIn: [result(id, false)] }, worker);
    await end(burnIn, "FAILED");
    expect((await call("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [id] })).status).toBe(409);

    const repair = (
      await call("POST", "/api/v1/jobs/", { kind: "REPAIR", deviceIds: [id], params: { ticket: "OPS-21" } })
    ).body;
    const r = await call("POST", `/api/v1/jobs/${repair.id}/report/`, { burnIn: [result(id, true)] }, worker);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.burnIn).toEqual([result(id, true)]);
    await end(repair, "SUCCEEDED");
    expect((await call<Device>("GET", `/api/v1/devices/${id}/`, undefined, reader)).body.burnIn).toMatchObject({
      status: "PASSED",
      jobId: repair.id,
    });
    expect((await call("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [id] })).status).toBe(201);
  });
});
