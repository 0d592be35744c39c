import { describe, expect, it } from "vitest";
import fryerHealthy from "./burn-in-samples/gpu-fryer-healthy.txt?raw";
import fryerUnhealthy from "./burn-in-samples/gpu-fryer-unhealthy.txt?raw";
import ncclAllReduce from "./burn-in-samples/nccl-tests-all-reduce.txt?raw";
import ncclMpirun from "./burn-in-samples/nccl-tests-mpirun.txt?raw";
import { parseBurnInOutput } from "./burn-in-output.ts";
import { burnInRefusal, burnInStatusOf } from "./burn-in.ts";

const SAMPLES: Record<string, string> = {
  "gpu-fryer-healthy.txt": fryerHealthy,
  "gpu-fryer-unhealthy.txt": fryerUnhealthy,
  "nccl-tests-all-reduce.txt": ncclAllReduce,
  "nccl-tests-mpirun.txt": ncclMpirun,
};
const sample = (name: string) => SAMPLES[name]!;

describe("parseBurnInOutput on real tool output", () => {
  it("reads gpu-fryer's per-GPU summary of a healthy run (README example)", () => {
    expect(parseBurnInOutput(sample("gpu-fryer-healthy.txt"))).toEqual({
      gpus: [
        {
          index: 7,
          tflops: 51.494,
          tflopsMin: 50.578,
          tflopsMax: 51.677,
          temperatureC: 48.83,
          temperatureMaxC: 50,
          throttled: false,
        },
      ],
      xids: [],
      reasons: [],
    });
  });

  it("reads an unhealthy gpu-fryer run: both GPUs, the throttled one, its reasons and the Xid", () => {
    const f = parseBurnInOutput(sample("gpu-fryer-unhealthy.txt"));
    expect(f.gpus.map((g) => [g.index, g.tflops, g.temperatureMaxC, g.throttled])).toEqual([
      [0, 51.212, 55, false],
      [1, 38.76, 89, true],
    ]);
    expect(f.reasons).toEqual([
      "GPU 1 - GPU is not performing as expected. Check the flops values and temperatures",
      "GPU 1 - GPU is throttled. Check the throttling reasons and temperatures",
    ]);
    expect(f.xids).toEqual([{ pciAddress: "0000:1b:00", code: 79, message: "pid=1122, GPU has fallen off the bus." }]);
  });

  it("reads nccl-tests' average bus bandwidth, plain or under mpirun's tags", () => {
    expect(parseBurnInOutput(sample("nccl-tests-all-reduce.txt")).busBandwidthGBps).toBe(194.675);
    expect(parseBurnInOutput(sample("nccl-tests-mpirun.txt")).busBandwidthGBps).toBe(1.15327);
    // the per-size table rows are not GPUs
    expect(parseBurnInOutput(sample("nccl-tests-all-reduce.txt")).gpus).toEqual([]);
  });

  it("finds nothing in text of no known shape", () => {
    expect(parseBurnInOutput("starting\nGPU #0: Using 100 MB out of 200 MB\ndone\n")).toEqual({
      gpus: [],
      xids: [],
      reasons: [],
    });
  });
});

describe("burn-in status and the RELEASE gate", () => {
  it.each([
    [[], "FAILED"],
    [[{ passed: true }], "PASSED"],
    [[{ passed: true }, { passed: false }], "FAILED"],
  ] as const)("tests %j → %s", (tests, status) => expect(burnInStatusOf(tests)).toBe(status));

  const failed = {
    status: "FAILED" as const,
    jobId: "7b0e4c52-6a59-4c3e-9f0b-0c1d2e3f4a5b",
    at: "2026-01-01T00:00:00.000Z",
  };
  it("refuses a device whose last burn-in failed, unless overridden", () => {
    expect(burnInRefusal({ name: "gpu001", burnIn: failed }, undefined)).toMatch(/gpu001 failed its last burn-in/);
    expect(burnInRefusal({ name: "gpu001", burnIn: failed }, { reason: "vendor accepted" })).toBeNull();
    expect(burnInRefusal({ name: "gpu001", burnIn: { ...failed, status: "PASSED" } }, undefined)).toBeNull();
    expect(burnInRefusal({ name: "gpu001", burnIn: null }, undefined)).toBeNull();
  });
});
