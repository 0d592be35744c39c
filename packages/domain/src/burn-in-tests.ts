/**
 * The hardware tests a burn-in runs, as the rollout guide's images provide them. Plain TypeScript
 * (no zod): the workflows, which run in Temporal's sandbox, read it too.
 *  - hardware-tests: the default image (hardwareTests.defaultContainerImage), keyed by the node's
 *    CPU architecture (`uname -m` on the node itself), single-node;
 *  - gpu-fryer: GPU stress (gpuFryerContainerImage), single-node;
 *  - nvloom: the NVLink fabric test (nvloomContainerImage), multi-node: one SLURM allocation over
 *    every device of the job, of one CPU architecture, at a site with a topology region.
 */
export const BURN_IN_TESTS = ["hardware-tests", "gpu-fryer", "nvloom"] as const;
export type BurnInTestName = (typeof BURN_IN_TESTS)[number];
export const MULTI_NODE_BURN_IN_TESTS: readonly BurnInTestName[] = ["nvloom"];
export const isMultiNodeTest = (t: BurnInTestName): boolean => MULTI_NODE_BURN_IN_TESTS.includes(t);
