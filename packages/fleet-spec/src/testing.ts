/** Builders the package's tests share: an effective cluster from a patch, the fixtures' paths. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { deepMerge } from "./merge.ts";
import { EffectiveClusterSchema, type EffectiveCluster } from "./spec.ts";

export const FIXTURES = fileURLToPath(new URL("../test-fixtures/", import.meta.url));
export const fixtureText = (name: string): string => readFileSync(`${FIXTURES}${name}`, "utf8");

/** One CPU node and one single-GPU RTX node, the seed's defaults. */
export const BASE_CLUSTER = {
  name: "c1",
  cpu_nodes: { count: 1, platform: "cpu-d3", preset: "48vcpu-192gb" },
  gpu_nodes: { count: 1, platform: "gpu-rtx6000", preset: "1gpu-24vcpu-218gb" },
};

/** H200 SXM: eight GPUs per node on an NVSwitch, fabric-capable. */
export const SXM_GPUS = { count: 2, platform: "gpu-h200-sxm", preset: "8gpu-128vcpu-1600gb" };

export function cluster(patch: Record<string, unknown> = {}): EffectiveCluster {
  return EffectiveClusterSchema.parse(deepMerge(BASE_CLUSTER, patch));
}
