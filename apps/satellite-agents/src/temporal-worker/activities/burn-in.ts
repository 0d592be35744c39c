/**
 * Burn-in results: once a device's SLURM job ended, the worker reads what each test left in the
 * shared output folder (see burn-in-script.ts), parses the figures out of its log, uploads the
 * log and the device's result to object storage, and reports the results to the hub. Reading and
 * uploading the same files again gives the same result, so a retried activity changes nothing.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  burnInStatusOf,
  parseBurnInOutput,
  type BurnInArtifact,
  type BurnInDeviceResult,
  type BurnInTest,
  type BurnInTestResult,
} from "@fm/domain";
import type { ActivityDeps } from "./deps.ts";
import { guarded, notConfigured } from "./failures.ts";

type BurnInDeps = Pick<ActivityDeps, "hub" | "burnIn" | "artifacts">;

export interface CollectBurnIn {
  deviceId: string;
  /** The output folder, relative to FM_BURNIN_OUTPUT_DIR (burnInDeviceFolder, burnInAllocationFolder). */
  folder: string;
  tests: BurnInTest[];
  /** How SLURM saw the job end, for a test that left no exit code. */
  slurm: { slurmJobId: number; state: string; exitCode: number | null };
}

export function burnInActivities(deps: BurnInDeps) {
  return {
    burnInCollect: (a: CollectBurnIn) => collect(deps, a),
    burnInReport: (a: { jobId: string; results: BurnInDeviceResult[] }) =>
      guarded(async () => void (await deps.hub.reportJob(a.jobId, { burnIn: a.results }))),
  };
}

const readText = (path: string) => readFile(path, "utf8").catch(() => null);

async function collect(deps: BurnInDeps, a: CollectBurnIn): Promise<BurnInDeviceResult> {
  return guarded(async () => {
    if (!deps.burnIn.outputDir)
      throw notConfigured("this worker has no FM_BURNIN_OUTPUT_DIR: it cannot read burn-in results");
    const dir = join(deps.burnIn.outputDir, a.folder);
    const architecture = (await readText(join(dir, "architecture")))?.trim() || null;
    const tests: BurnInTestResult[] = [];
    for (const test of a.tests) {
      const log = await readText(join(dir, `${test}.log`));
      const exit = (await readText(join(dir, `${test}.exit`)))?.trim();
      const exitCode = exit !== undefined && /^\d+$/.test(exit) ? Number(exit) : null;
      const image = (await readText(join(dir, `${test}.image`)))?.trim() || null;
      const figures = parseBurnInOutput(log ?? "");
      const passed = exitCode === 0 && figures.xids.length === 0;
      const artifacts: BurnInArtifact[] = [];
      if (log !== null && deps.artifacts) {
        const key = `burn-in/${a.folder}/${test}.log`;
        const url = await deps.artifacts.put(key, log, "text/plain; charset=utf-8");
        artifacts.push({ name: `${test}.log`, url, bytes: Buffer.byteLength(log) });
      }
      tests.push({
        test,
        passed,
        exitCode,
        image,
        architecture,
        figures,
        ...(passed ? {} : { message: failureOf(test, exitCode, figures, a.slurm).slice(0, 2000) }),
        artifacts,
      });
    }
    const result: BurnInDeviceResult = { deviceId: a.deviceId, status: burnInStatusOf(tests), tests };
    if (deps.artifacts) {
      const key = `burn-in/${a.folder}/result.json`;
      const body = JSON.stringify(result, null, 2);
      const url = await deps.artifacts.put(key, body, "application/json");
      // The result file is linked from the first test, where a reader of the job looks.
      tests[0]!.artifacts.push({ name: "result.json", url, bytes: Buffer.byteLength(body) });
    }
    return result;
  });
}

function failureOf(
  test: BurnInTest,
  exitCode: number | null,
  figures: BurnInTestResult["figures"],
  slurm: CollectBurnIn["slurm"],
): string {
  const parts = [
    exitCode === null
      ? `${test} left no exit code (SLURM job ${slurm.slurmJobId} ended ${slurm.state}): it did not run to an end`
      : exitCode === 0
        ? `${test} exited 0`
        : `${test} exited ${exitCode}`,
  ];
  if (figures.xids.length) parts.push(`Xid ${[...new Set(figures.xids.map((x) => x.code))].join(", ")} logged`);
  if (figures.reasons.length) parts.push(figures.reasons.join("; "));
  return parts.join("; ");
}
