/**
 * Burn-in results as data: which hardware tests a burn-in runs, what each test's outcome on each
 * device is (pass or fail, exit code, the figures the tool printed, the artifacts kept), and the
 * rule that a device whose last burn-in failed is not handed over without an operator override.
 */
import { z } from "zod";
import { Timestamp, Uuid } from "./common.ts";
import { BURN_IN_TESTS } from "./burn-in-tests.ts";

/** Which hardware tests exist and which are multi-node: burn-in-tests.ts (read by the workflows too). */
export const BurnInTest = z.enum(BURN_IN_TESTS);
export type BurnInTest = z.infer<typeof BurnInTest>;

export const BURN_IN_STATUSES = ["PASSED", "FAILED"] as const;
export const BurnInStatus = z.enum(BURN_IN_STATUSES);
export type BurnInStatus = z.infer<typeof BurnInStatus>;

/** One GPU's figures, as far as the tool printed them. */
export const BurnInGpuFiguresSchema = z
  .strictObject({
    index: z.number().int().min(0).max(1023),
    tflops: z.number().min(0).optional().describe("Average TFLOPS over the test"),
    tflopsMin: z.number().min(0).optional(),
    tflopsMax: z.number().min(0).optional(),
    temperatureC: z.number().optional().describe("Average temperature over the test (°C)"),
    temperatureMaxC: z.number().optional(),
    throttled: z.boolean().optional().describe("Hardware or thermal throttling seen"),
  })
  .meta({ id: "BurnInGpuFigures" });
export type BurnInGpuFigures = z.infer<typeof BurnInGpuFiguresSchema>;

export const BurnInXidSchema = z
  .strictObject({
    pciAddress: z.string().max(40),
    code: z.number().int().min(0),
    message: z.string().max(500),
  })
  .meta({ id: "BurnInXid" });
export type BurnInXid = z.infer<typeof BurnInXidSchema>;

/** What a test printed that is worth keeping as data. */
export const BurnInFiguresSchema = z
  .strictObject({
    gpus: z.array(BurnInGpuFiguresSchema).max(1024),
    busBandwidthGBps: z.number().min(0).optional().describe("nccl-tests' average bus bandwidth (GB/s)"),
    xids: z.array(BurnInXidSchema).max(1000).describe("NVIDIA Xid errors the kernel logged during the test"),
    reasons: z.array(z.string().max(500)).max(100).describe("Why the tool judged the GPUs unhealthy, as it said"),
  })
  .meta({ id: "BurnInFigures" });
export type BurnInFigures = z.infer<typeof BurnInFiguresSchema>;

export const BurnInArtifactSchema = z
  .strictObject({
    name: z.string().min(1).max(200).describe("e.g. gpu-fryer.log"),
    url: z.string().min(1).max(2000).describe("s3://bucket/key"),
    bytes: z.number().int().min(0),
  })
  .meta({ id: "BurnInArtifact" });
export type BurnInArtifact = z.infer<typeof BurnInArtifactSchema>;

export const BurnInTestResultSchema = z
  .strictObject({
    test: BurnInTest,
    passed: z.boolean(),
    exitCode: z.number().int().nullable().describe("The test's exit code; null when it never ran to an end"),
    image: z.string().max(1000).nullable().describe("The Enroot image it ran (chosen on the node)"),
    architecture: z.string().max(40).nullable().describe("`uname -m` of the node it ran on"),
    figures: BurnInFiguresSchema,
    message: z.string().max(2000).optional().describe("Why it failed, in a sentence"),
    artifacts: z.array(BurnInArtifactSchema).max(20),
  })
  .meta({ id: "BurnInTestResult" });
export type BurnInTestResult = z.infer<typeof BurnInTestResultSchema>;

/** A device's burn-in in one job: every test's outcome; it passed when all of them did. */
export const BurnInDeviceResultSchema = z
  .strictObject({
    deviceId: Uuid,
    status: BurnInStatus,
    tests: z.array(BurnInTestResultSchema).min(1).max(BURN_IN_TESTS.length),
  })
  // The status is the tests' verdict, never a reporter's say: a PASSED over a failed test is refused.
  .refine((r) => r.status === burnInStatusOf(r.tests), {
    path: ["status"],
    message: "must be PASSED exactly when every test passed",
  })
  .meta({ id: "BurnInDeviceResult" });
export type BurnInDeviceResult = z.infer<typeof BurnInDeviceResultSchema>;

/** The last burn-in result of a device, as the device shows it. */
export const DeviceBurnInSchema = z
  .strictObject({
    status: BurnInStatus,
    jobId: Uuid,
    at: Timestamp,
  })
  .meta({ id: "DeviceBurnIn" });
export type DeviceBurnIn = z.infer<typeof DeviceBurnInSchema>;

/** The operator's override of the burn-in gate on RELEASE: the reason is kept in the audit. */
export const BurnInOverrideSchema = z
  .strictObject({ reason: z.string().trim().min(1).max(1000) })
  .meta({ id: "BurnInOverride" });

export function burnInStatusOf(tests: readonly Pick<BurnInTestResult, "passed">[]): BurnInStatus {
  return tests.length > 0 && tests.every((t) => t.passed) ? "PASSED" : "FAILED";
}

/**
 * Why RELEASE refuses this device for its burn-in, or null: a device whose last burn-in failed is
 * handed over only with an operator's override (and its reason).
 */
export function burnInRefusal(
  d: { name: string; burnIn: DeviceBurnIn | null },
  override: { reason: string } | undefined,
): string | null {
  if (d.burnIn?.status !== "FAILED" || override) return null;
  return `${d.name} failed its last burn-in (job ${d.burnIn.jobId}): run a burn-in that passes, or give params.burnInOverride.reason to hand it over anyway`;
}
