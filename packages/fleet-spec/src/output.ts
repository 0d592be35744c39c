/**
 * The JSON `fleetctl fleet plan|preflight --output json` prints, and what the library returns:
 * one schema each, with a `version` that changes only when a field changes meaning or goes away
 * (adding a field keeps the version). docs/fleet-spec.md describes every field.
 */
import { z } from "zod";

export const OUTPUT_VERSION = 1;

const PoolSchema = z.strictObject({
  count: z.int(),
  platform: z.string(),
  preset: z.string(),
  vcpusPerNode: z.int(),
  memoryGibPerNode: z.int(),
  bootDiskGibibytes: z.int(),
});
export type ResolvedPool = z.output<typeof PoolSchema>;

const GpuPoolSchema = PoolSchema.extend({
  gpusPerNode: z.int(),
  /** The quota family: `compute.instance.gpu.<family>`. */
  gpuFamily: z.string(),
  /** 8-GPU SXM: NVSwitch topology, fabric-capable. */
  nvswitch: z.boolean(),
  /** Reserved capacity, rendered STRICT (never falls back to on-demand); null for on-demand. */
  capacityBlockGroup: z.string().nullable(),
});
export type ResolvedGpuPool = z.output<typeof GpuPoolSchema>;

export const GpuDriverSchema = z.discriminatedUnion("mode", [
  z.strictObject({ mode: z.literal("none") }),
  z.strictObject({ mode: z.literal("managed"), preset: z.string() }),
  z.strictObject({ mode: z.literal("operator"), unsafeNvswitchAcknowledged: z.boolean() }),
  z.strictObject({ mode: z.literal("rtx-rendering") }),
]);
export type GpuDriver = z.output<typeof GpuDriverSchema>;

const KubeRaySchema = z.strictObject({
  workerReplicas: z.int(),
  workerCpus: z.number(),
  workerMemoryGib: z.number(),
  headCpus: z.number(),
  headMemoryGib: z.number(),
});
export type ResolvedKubeRay = z.output<typeof KubeRaySchema>;

export const ResolvedClusterSchema = z.strictObject({
  name: z.string(),
  backend: z.enum(["mk8s", "soperator"]),
  backendSettings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  cpuNodes: PoolSchema.nullable(),
  gpuNodes: GpuPoolSchema.nullable(),
  enableGpuCluster: z.boolean(),
  infinibandFabric: z.string().nullable(),
  gpuDriver: GpuDriverSchema,
  gpuWorkloadProfile: z.literal("rtx-rendering").nullable(),
  gpuHealth: z
    .strictObject({ stabilizationSeconds: z.int(), timeoutMinutes: z.int(), cudaSmoke: z.boolean() })
    .nullable(),
  filestore: z
    .strictObject({
      sizeGibibytes: z.int(),
      mountPath: z.string(),
      mountTag: z.string(),
      csiChartRepository: z.string().nullable(),
    })
    .nullable(),
  kuberay: KubeRaySchema.nullable(),
  mig: z.strictObject({ strategy: z.literal("mixed"), config: z.string() }).nullable(),
  /** File names of the driver's package-source files (their text is not repeated in a plan). */
  driverPackageRepositories: z.array(z.string()),
  /** Decisions a reader should know about (an auto setting resolved, a default taken). */
  notes: z.array(z.string()),
});
export type ResolvedCluster = z.output<typeof ResolvedClusterSchema>;

export const PlannedProjectSchema = z.strictObject({
  /** The selector key: the entry's name, or its project_id. */
  key: z.string(),
  /** create: by name, created on demand (or reused when a project of that name exists, which preflight reads); existing: by project_id. */
  action: z.enum(["create", "existing"]),
  /** The provider name of a created project: project_prefix + name. */
  projectName: z.string().nullable(),
  projectId: z.string().nullable(),
  objectStorage: z
    .strictObject({
      storageClass: z.enum(["standard", "enhanced"]),
      sizeGibibytes: z.int(),
      bucketName: z.string().nullable(),
    })
    .nullable(),
  clusters: z.array(ResolvedClusterSchema),
});
export type PlannedProject = z.output<typeof PlannedProjectSchema>;

export const FleetPlanSchema = z.strictObject({
  kind: z.literal("FleetPlan"),
  version: z.literal(OUTPUT_VERSION),
  apiVersion: z.string(),
  fleet: z.string(),
  tenantId: z.string(),
  tenantFrom: z.enum(["spec", "profile"]),
  /** The Nebius profile every provider read runs as; empty: the active one. */
  profile: z.string(),
  region: z.string(),
  projectPrefix: z.string(),
  /** The selectors applied (null: all). */
  selection: z.strictObject({
    projects: z.array(z.string()).nullable(),
    clusters: z.array(z.string()).nullable(),
  }),
  projects: z.array(PlannedProjectSchema),
});
export type FleetPlan = z.output<typeof FleetPlanSchema>;

export const QuotaLineSchema = z.strictObject({
  name: z.string(),
  region: z.string(),
  required: z.number(),
  unit: z.string(),
  limit: z.number().nullable(),
  usage: z.number().nullable(),
  /** limit − usage, what this fleet may still take; null when the evidence does not say. */
  available: z.number().nullable(),
  ok: z.boolean(),
  /** Who needs it: `project a`, `a/default`, `bucket of a`. */
  from: z.array(z.strictObject({ subject: z.string(), amount: z.number() })),
});
export type QuotaLine = z.output<typeof QuotaLineSchema>;

export const SHORTFALL_KINDS = ["evidence", "project", "capacity_block", "quota"] as const;
export const ShortfallSchema = z.strictObject({
  kind: z.enum(SHORTFALL_KINDS),
  /** What it concerns: a quota name, a project key, a capacity block group ID, an evidence file. */
  subject: z.string(),
  message: z.string(),
});
export type Shortfall = z.output<typeof ShortfallSchema>;

export const FleetPreflightSchema = z.strictObject({
  kind: z.literal("FleetPreflight"),
  version: z.literal(OUTPUT_VERSION),
  fleet: z.string(),
  tenantId: z.string(),
  region: z.string(),
  /** pass only when every check read its evidence and found no shortfall. */
  verdict: z.enum(["pass", "refuse"]),
  projects: z.array(
    z.strictObject({
      key: z.string(),
      /** create: no project of that name exists (its VPC objects are charged); existing: read back and verified. */
      action: z.enum(["create", "existing"]),
      projectId: z.string().nullable(),
      verified: z.boolean(),
    }),
  ),
  capacityBlocks: z.array(
    z.strictObject({
      id: z.string(),
      requiredGpus: z.int(),
      remainingGpus: z.int().nullable(),
      platform: z.string().nullable(),
      fabric: z.string().nullable(),
      instances: z.int().nullable(),
      /** Validated: its GPUs are excluded from the on-demand GPU quota. */
      ok: z.boolean(),
    }),
  ),
  quotas: z.array(QuotaLineSchema),
  shortfalls: z.array(ShortfallSchema),
});
export type FleetPreflight = z.output<typeof FleetPreflightSchema>;
