/**
 * Burn-in end to end, every part a process: the hub, the NetBox test server, Ironic, SLURM
 * (slurmctld, slurmd, slurmrestd: the tests' batch scripts really run), Temporal, the site's
 * agents and worker, and the run's S3 server (gofakes3). The burn-in command stands in for the
 * Enroot images and prints what the real tools print (gpu-fryer's output, from the parser's
 * samples). Asserted: the job's results and figures, the device's last burn-in and its history,
 * the artifacts in the bucket, the RELEASE gate and its audited override, and that the object
 * storage secret shows up neither in the worker's logs nor in the workflow's history.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Client, Connection } from "@temporalio/client";
import type { Device, DeviceHistoryEntry, Job } from "@fm/domain";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import { REPO_ROOT } from "@fm/test-support/process";
import { s3Keys, s3Text } from "@fm/test-support/s3";

const SAMPLES = join(REPO_ROOT, "packages/domain/src/burn-in-samples");
const s3 = inject("s3");
let s: JobsStack;
let connection: Connection;

beforeAll(async () => {
  s = await startJobsStack({
    stagedDevices: 2,
    slurmNodes: 2,
    s3,
    // gpu002's GPUs overheat: gpu-fryer says so and exits 1, as the real tool does.
    burnInCommand: `case "$FM_TEST" in
  hardware-tests) echo "hardware tests from $FM_TEST_IMAGE on $FM_DEVICE" ;;
  gpu-fryer) if [ "$FM_DEVICE" = gpu002 ]; then cat ${SAMPLES}/gpu-fryer-unhealthy.txt; exit 1; fi
             cat ${SAMPLES}/gpu-fryer-healthy.txt ;;
esac`,
  });
  connection = await Connection.connect({ address: s.temporal.address });
}, 480_000);
afterAll(async () => {
  await connection?.close();
  await s?.stop();
}, 120_000);

const device = async (id: string) => (await s.api<Device>("GET", `/api/v1/devices/${id}/`)).body;

describe("burn-in with two tests on two devices", () => {
  let job: Job;
  let good: Device;
  let bad: Device;

  it("runs both tests on each node, fails for the device gpu-fryer found unhealthy, and keeps the figures", async () => {
    [good, bad] = s.staged as [Device, Device];
    for (const d of [good!, bad!]) {
      const enrol = await s.runJob({ kind: "ENROL", deviceIds: [d.id] });
      expect(enrol.status, JSON.stringify(enrol.error)).toBe("SUCCEEDED");
    }
    job = await s.runJob(
      {
        kind: "BURN_IN",
        deviceIds: [good!.id, bad!.id],
        params: { durationMinutes: 1, tests: ["hardware-tests", "gpu-fryer"] },
      },
      120_000,
    );
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatchObject({ step: "results" });
    expect(job.error!.message).toMatch(/^results: burn-in failed on gpu002 \(gpu-fryer exited 1; Xid 79 logged; /);
    expect(job.steps.map((st) => [st.name, st.status])).toEqual([
      ["preflight", "SUCCEEDED"],
      ["slurm-submit", "SUCCEEDED"],
      ["slurm-run", "SUCCEEDED"],
      ["results", "FAILED"],
    ]);
    // A failure links the log explorer, queried for the job.
    expect(job.logsUrl).toContain(job.id);

    const of = (d: Device) => job.burnIn.find((r) => r.deviceId === d.id)!;
    expect(of(good!).status).toBe("PASSED");
    expect(of(bad!).status).toBe("FAILED");
    const [hw, fryer] = of(bad!).tests;
    expect(hw).toMatchObject({
      test: "hardware-tests",
      passed: true,
      exitCode: 0,
      architecture: expect.stringMatching(/^(x86_64|aarch64)$/),
    });
    // The default image is the one keyed by the node's own architecture.
    expect(hw!.image).toBe(`/vast/enroot-cache/${hw!.architecture}/hardware-tests-default.sqsh`);
    expect(fryer).toMatchObject({ test: "gpu-fryer", passed: false, exitCode: 1 });
    expect(fryer!.figures.gpus).toEqual([
      {
        index: 0,
        tflops: 51.212,
        tflopsMin: 50.112,
        tflopsMax: 51.877,
        temperatureC: 52.4,
        temperatureMaxC: 55,
        throttled: false,
      },
      {
        index: 1,
        tflops: 38.76,
        tflopsMin: 35.184,
        tflopsMax: 47.278,
        temperatureC: 85.1,
        temperatureMaxC: 89,
        throttled: true,
      },
    ]);
    expect(fryer!.figures.xids).toEqual([
      { pciAddress: "0000:1b:00", code: 79, message: "pid=1122, GPU has fallen off the bus." },
    ]);
    expect(of(good!).tests[1]!.figures.gpus[0]).toMatchObject({ index: 7, tflops: 51.494, throttled: false });
  }, 300_000);

  it("puts the logs and results in the bucket, linked from the job", async () => {
    const keys = await s3Keys(s3, `burn-in/${job.name}/`);
    // Under the job and each device's id (never its NetBox name, which may be `../../x`).
    expect(keys).toEqual(
      [good.id, bad.id]
        .flatMap((id) => [
          `burn-in/${job.name}/${id}/gpu-fryer.log`,
          `burn-in/${job.name}/${id}/hardware-tests.log`,
          `burn-in/${job.name}/${id}/result.json`,
        ])
        .sort(),
    );
    const fryer = job.burnIn.find((r) => r.deviceId === bad.id)!.tests[1]!;
    const log = await s3Text(fryer.artifacts.find((a) => a.name === "gpu-fryer.log")!.url);
    expect(log).toBe(readFileSync(join(SAMPLES, "gpu-fryer-unhealthy.txt"), "utf8"));
  });

  it("shows each device's last burn-in, filters on it, and records it in the device's history", async () => {
    expect((await device(bad.id)).burnIn).toMatchObject({ status: "FAILED", jobId: job.id });
    expect((await device(good.id)).burnIn).toMatchObject({ status: "PASSED", jobId: job.id });
    const failed = (await s.api<{ items: Device[] }>("GET", "/api/v1/devices/?burnIn=failed")).body.items;
    expect(failed.map((d) => d.name)).toEqual(["gpu002"]);
    const history = (
      await s.api<{ items: DeviceHistoryEntry[] }>("GET", `/api/v1/devices/${bad.id}/history/?field=burnIn`)
    ).body.items;
    expect(history.map((h) => [h.source, h.newValue])).toEqual([
      [`job:${job.name}`, { status: "FAILED", jobId: job.id }],
    ]);
  });

  it("RELEASE refuses the failed device, and hands it over with an operator's override, audited", async () => {
    const refused = await s.api("POST", "/api/v1/jobs/", { kind: "RELEASE", deviceIds: [bad.id] });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("burn_in_failed");
    const reason = "thermal paste replaced; vendor signed off";
    const released = await s.api("POST", "/api/v1/jobs/", {
      kind: "RELEASE",
      deviceIds: [bad.id],
      params: { burnInOverride: { reason } },
    });
    expect(released.status).toBe(201);
    const audit = (
      await s.api<{ items: { action: string; diff: unknown }[] }>(
        "GET",
        `/api/v1/audit/?action=device.burn_in_override&resourceId=${bad.id}`,
      )
    ).body.items;
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit[0]!.diff)).toContain(reason);
  });

  it("keeps the object storage secret out of the worker's logs and the workflow's history", async () => {
    const history = await new Client({ connection }).workflow.getHandle(job.workflowId!).fetchHistory();
    const text = JSON.stringify(history);
    // Payloads (inputs, results, failures) are base64 JSON: read them as the history holds them.
    const payloads = [...text.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)]
      .map((m) => Buffer.from(m[1]!, "base64").toString("utf8"))
      .join("\n");
    expect(payloads).toContain(job.name); // the history is the burn-in's, artifact links included
    expect(payloads).toContain(`/${s3.bucket}/burn-in/${job.name}/${bad.id}/gpu-fryer.log`);
    expect(text + payloads).not.toContain(s3.secretAccessKey);
    expect(text + payloads).not.toContain(s3.accessKeyId);
    expect(JSON.stringify(s.worker.logs) + s.worker.stderr.join("")).not.toContain(s3.secretAccessKey);
  });
});
