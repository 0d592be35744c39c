/**
 * The burn-in activities against a real SLURM (the batch scripts really run, on the fake nodes)
 * and the run's real S3 server (gofakes3): what each test leaves in the shared output folder,
 * how the worker reads it into results with the figures parsed, and the artifacts it uploads.
 * The tests' command stands in for the Enroot images: it prints what the real tools print.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SlurmClient } from "@fm/clients";
import { startSlurm, type SlurmPeer } from "@fm/test-support/slurm";
import { s3Keys, s3Text } from "@fm/test-support/s3";
import { WAITING, plan, run } from "./activity-testing.ts";
import { s3ArtifactStore } from "./artifacts.ts";
import { burnInActivities } from "./burn-in.ts";
import { burnInAllocationFolder, burnInDeviceFolder } from "@fm/domain/workflows";
import type { ActivityDeps } from "./deps.ts";
import { slurmActivities } from "./slurm.ts";

const FRYER_SAMPLE = fileURLToPath(
  new URL("../../../../../packages/domain/src/burn-in-samples/gpu-fryer-unhealthy.txt", import.meta.url),
);
/** Stands in for the images: the default image says which image it is; gpu-fryer prints a real failing run. */
const COMMAND = `case "$FM_TEST" in
  hardware-tests) echo "hardware tests in $FM_TEST_IMAGE on $FM_DEVICE for $FM_BURNIN_DURATION_S s" ;;
  gpu-fryer) cat ${FRYER_SAMPLE}; exit 1 ;;
  nvloom) echo "nvloom task on $SLURMD_NODENAME" ;;
esac`;
const ARCH = execFileSync("uname", ["-m"], { encoding: "utf8" }).trim();
const OTHER_ARCH = ARCH === "x86_64" ? "aarch64" : "x86_64";

let slurm: SlurmPeer;
let outputDir: string;
const s3 = inject("s3");
beforeAll(async () => {
  slurm = await startSlurm();
  outputDir = await mkdtemp(join(tmpdir(), "fm-burn-in-out-"));
}, 180_000);
afterAll(async () => {
  await slurm?.stop();
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
}, 60_000);

const activities = (over: Partial<ActivityDeps["burnIn"]["images"]> = {}) => {
  const deps = {
    slurm: new SlurmClient({ baseUrl: slurm.url, user: "root", token: () => slurm.token, backoffMs: 20 }),
    slurmDeviceNamePrefix: "",
    pollIntervalMs: 100,
    burnIn: {
      images: {
        defaultByArch: {
          [ARCH]: `/enroot/${ARCH}/hardware-tests.sqsh`,
          [OTHER_ARCH]: `/enroot/${OTHER_ARCH}/wrong.sqsh`,
        },
        gpuFryer: "/enroot/gpu-fryer.sqsh",
        nvloom: "/enroot/nvloom.sqsh",
        ...over,
      },
      command: COMMAND,
      outputDir,
    },
    artifacts: s3ArtifactStore({ ...s3, region: "us-east-1" }),
  };
  return { ...slurmActivities(deps), ...burnInActivities({ ...deps, hub: undefined as never }) };
};

describe("burn-in activities", () => {
  it(
    "runs two tests on a node: the default image chosen from its uname -m, gpu-fryer's failure parsed, logs and results in S3",
    async () => {
      const acts = activities();
      const d = plan({ name: "bi-two-tests", slurmNodeName: "gpu001" });
      const jobName = `burn-in-two-${process.pid}`;
      const tests = ["hardware-tests", "gpu-fryer"] as const;
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName,
        device: d,
        durationMinutes: 1,
        tests: [...tests],
        folder: burnInDeviceFolder(jobName, d.deviceId),
      });
      const { result: end } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      expect(end).toMatchObject({ state: "FAILED", exitCode: 1 });

      const collect = {
        deviceId: d.deviceId,
        folder: burnInDeviceFolder(jobName, d.deviceId),
        tests: [...tests],
        slurm: end,
      };
      const { result } = await run(acts.burnInCollect, collect);
      expect(result.status).toBe("FAILED");
      const [hw, fryer] = result.tests;
      expect(hw).toMatchObject({
        test: "hardware-tests",
        passed: true,
        exitCode: 0,
        image: `/enroot/${ARCH}/hardware-tests.sqsh`,
        architecture: ARCH,
      });
      expect(fryer).toMatchObject({
        test: "gpu-fryer",
        passed: false,
        exitCode: 1,
        image: "/enroot/gpu-fryer.sqsh",
        message: expect.stringMatching(/^gpu-fryer exited 1; Xid 79 logged; GPU 1 - GPU is not performing/),
      });
      expect(fryer!.figures.gpus.map((g) => [g.index, g.tflops, g.throttled])).toEqual([
        [0, 51.212, false],
        [1, 38.76, true],
      ]);
      expect(fryer!.figures.xids.map((x) => x.code)).toEqual([79]);

      // The artifacts are in the bucket, under the job and device, and their links read back.
      expect(await s3Keys(s3, `burn-in/${jobName}/`)).toEqual([
        `burn-in/${jobName}/${d.deviceId}/gpu-fryer.log`,
        `burn-in/${jobName}/${d.deviceId}/hardware-tests.log`,
        `burn-in/${jobName}/${d.deviceId}/result.json`,
      ]);
      const log = hw!.artifacts.find((a) => a.name === "hardware-tests.log")!;
      expect(await s3Text(log.url)).toBe(
        `hardware tests in /enroot/${ARCH}/hardware-tests.sqsh on ${d.name} for 60 s\n`,
      );
      const resultFile = hw!.artifacts.find((a) => a.name === "result.json")!;
      expect(JSON.parse((await s3Text(resultFile.url))!)).toMatchObject({ deviceId: d.deviceId, status: "FAILED" });
      expect(await s3Text(fryer!.artifacts[0]!.url)).toContain("Some GPUs are not healthy. Reasons:");

      // Collecting again (a retried activity) gives the same result and the same objects.
      expect((await run(acts.burnInCollect, collect)).result).toEqual(result);
      expect(await s3Keys(s3, `burn-in/${jobName}/`)).toHaveLength(3);
    },
    WAITING,
  );

  it(
    "a node whose architecture has no image fails the default test with a clear message, without running anything",
    async () => {
      const acts = activities({ defaultByArch: { [OTHER_ARCH]: `/enroot/${OTHER_ARCH}/hw.sqsh` } });
      const d = plan({ name: "bi-no-image", slurmNodeName: "gpu002" });
      const jobName = `burn-in-noimage-${process.pid}`;
      const { result: id } = await run(acts.slurmSubmitBurnIn, {
        jobId: randomUUID(),
        jobName,
        device: d,
        durationMinutes: 1,
        tests: ["hardware-tests"],
        folder: burnInDeviceFolder(jobName, d.deviceId),
      });
      const { result: end } = await run(acts.slurmWait, { slurmJobId: id, device: d.name });
      const { result } = await run(acts.burnInCollect, {
        deviceId: d.deviceId,
        folder: burnInDeviceFolder(jobName, d.deviceId),
        tests: ["hardware-tests"],
        slurm: end,
      });
      expect(result.tests[0]).toMatchObject({ passed: false, exitCode: 127, image: null, architecture: ARCH });
      expect(await s3Text(result.tests[0]!.artifacts[0]!.url)).toBe(
        `no hardware-tests image is configured for ${ARCH}\n`,
      );
    },
    WAITING,
  );

  it(
    "a multi-node test runs once per node in one allocation of one architecture, with its scalar image",
    async () => {
      const acts = activities();
      const devices = [
        plan({ name: "bi-multi-a", slurmNodeName: "gpu003" }),
        plan({ name: "bi-multi-b", slurmNodeName: "gpu004" }),
      ];
      const jobName = `burn-in-multi-${process.pid}`;
      const { result: id } = await run(acts.slurmSubmitMultiNode, {
        jobId: randomUUID(),
        jobName,
        devices,
        test: "nvloom",
        durationMinutes: 1,
      });
      const { result: end } = await run(acts.slurmWait, { slurmJobId: id, device: "nvloom" });
      expect(end).toMatchObject({ state: "COMPLETED", exitCode: 0 });
      const { result } = await run(acts.burnInCollect, {
        deviceId: devices[0]!.deviceId,
        folder: burnInAllocationFolder(jobName, "nvloom"),
        tests: ["nvloom"],
        slurm: end,
      });
      expect(result.tests[0]).toMatchObject({
        passed: true,
        exitCode: 0,
        image: "/enroot/nvloom.sqsh",
        architecture: ARCH,
      });
      const log = (await s3Text(result.tests[0]!.artifacts[0]!.url))!.split("\n").filter(Boolean).sort();
      expect(log).toEqual(["nvloom task on gpu003", "nvloom task on gpu004"]);
    },
    WAITING,
  );
});
