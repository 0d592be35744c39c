/**
 * The fleet spec, `apiVersion: npa.fleet/v0.0.1`: one declarative file standing up managed
 * Kubernetes clusters across projects of one Nebius tenant (docs/fleet-spec.md).
 *
 * Two shapes of a cluster: a *patch* (what `defaults` and a project's `clusters[]` entries may
 * say, every field optional) and the *effective* cluster (defaults deep-merged under the patch,
 * every field present, checked strictly). Unknown keys are refused everywhere: a misspelt
 * setting silently ignored is how a fleet gets deployed with the wrong policy.
 */
import { z } from "zod";

export const API_VERSION = "npa.fleet/v0.0.1";

/** A DNS label: cluster, fleet and project names become provider resource names. */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** Provider IDs (`project-e00…`, `capacityblockgroup-…`): also used in evidence file names, so no `/` or `.`. */
export const PROVIDER_ID = /^[a-z][a-z0-9]*-[a-z0-9]{4,60}$/;
const PLATFORM = /^[a-z][a-z0-9-]{1,62}$/;
const PRESET = /^[0-9a-z][0-9a-z-]{1,62}$/;
const REGION = /^[a-z][a-z0-9-]{1,30}[0-9]$/;
/** A file name under the driver's repository directory: no path, no hidden file. */
export const SAFE_FILENAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const label = (what: string) => z.string().regex(LABEL, `${what} must be a DNS label (a-z, 0-9, '-', at most 63)`);
const scalar = z.union([z.string(), z.number(), z.boolean()]);
/** Backend-owned settings (`mk8s: {...}`, `soperator: {...}`): flat, passed to the backend as they are. */
const backendBlock = z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, "a setting name is snake_case"), scalar);

const pool = {
  count: z.int().min(0).max(1000),
  platform: z.string().regex(PLATFORM, "a platform name such as cpu-d3 or gpu-h200-sxm"),
  preset: z.string().regex(PRESET, "a preset name such as 48vcpu-192gb or 8gpu-128vcpu-1600gb"),
  boot_disk_gibibytes: z.int().min(32).max(16_384),
};
const capacityBlockGroup = z.union([
  z.literal(""),
  z.string().regex(PROVIDER_ID, "a capacity block group ID (capacityblockgroup-…)"),
]);

export const CpuPoolSchema = z.strictObject({ ...pool, boot_disk_gibibytes: pool.boot_disk_gibibytes.default(128) });
export const GpuPoolSchema = z.strictObject({
  ...pool,
  boot_disk_gibibytes: pool.boot_disk_gibibytes.default(128),
  capacity_block_group: capacityBlockGroup.default(""),
});
const CpuPoolPatch = z.strictObject({
  count: pool.count.optional(),
  platform: pool.platform.optional(),
  preset: pool.preset.optional(),
  boot_disk_gibibytes: pool.boot_disk_gibibytes.optional(),
});
const GpuPoolPatch = CpuPoolPatch.extend({ capacity_block_group: capacityBlockGroup.optional() });

const positive = z.number().positive().max(100_000);
export const KubeRaySchema = z.discriminatedUnion("enabled", [
  z.strictObject({ enabled: z.literal(false) }),
  z.strictObject({
    enabled: z.literal(true),
    worker_replicas: z.int().min(1).max(1000),
    worker_cpus: positive,
    worker_memory_gib: positive,
    head_cpus: positive.default(1),
    head_memory_gib: positive.default(2),
  }),
]);
const KubeRayPatch = z.strictObject({
  enabled: z.boolean().optional(),
  worker_replicas: z.int().min(1).max(1000).optional(),
  worker_cpus: positive.optional(),
  worker_memory_gib: positive.optional(),
  head_cpus: positive.optional(),
  head_memory_gib: positive.optional(),
});

export const MigSchema = z.discriminatedUnion("enabled", [
  z.strictObject({ enabled: z.literal(false) }),
  z.strictObject({
    enabled: z.literal(true),
    strategy: z.enum(["single", "mixed"]),
    config: z.string().min(1).max(100),
  }),
]);
const MigPatch = z.strictObject({
  enabled: z.boolean().optional(),
  strategy: z.enum(["single", "mixed"]).optional(),
  config: z.string().min(1).max(100).optional(),
});

export const GPU_WORKLOAD_PROFILES = ["rtx-rendering"] as const;

/** Every cluster setting, as the effective (merged) cluster has it. */
const clusterFields = {
  backend: z.enum(["mk8s", "soperator"]).default("mk8s"),
  mk8s: backendBlock.optional(),
  soperator: backendBlock.optional(),
  gpu_driver_mode: z.enum(["auto", "operator"]).default("auto"),
  managed_driver_preset: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{0,40}$/)
    .default("cuda13.0"),
  allow_unsafe_nvswitch_operator: z.boolean().default(false),
  gpu_health_stabilization_seconds: z.int().min(0).max(3600).default(120),
  gpu_health_timeout_minutes: z.int().min(1).max(1440).default(60),
  gpu_cuda_smoke: z.boolean().default(true),
  cpu_nodes: CpuPoolSchema.nullable().default(null),
  gpu_nodes: GpuPoolSchema.nullable().default(null),
  enable_gpu_cluster: z.union([z.literal("auto"), z.boolean()]).default("auto"),
  infiniband_fabric: z
    .string()
    .regex(/^([a-z][a-z0-9-]{1,62})?$/)
    .default(""),
  enable_filestore: z.boolean().default(false),
  filestore_disk_size_gibibytes: z.int().min(1).max(1_048_576).default(1024),
  filestore_mount_path: z
    .string()
    .regex(/^\/[A-Za-z0-9._/-]*$/, "an absolute path")
    .default("/mnt/data"),
  filestore_mount_tag: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$/)
    .default("npa-shared-fs"),
  filesystem_csi_chart_repository: z.string().max(500).default(""),
  gpu_workload_profile: z.enum(GPU_WORKLOAD_PROFILES).nullable().default(null),
  gpu_driver_package_repositories: z.record(z.string(), z.string().max(20_000)).default({}),
  kuberay: KubeRaySchema.default({ enabled: false }),
  mig: MigSchema.default({ enabled: false }),
};

export const EffectiveClusterSchema = z.strictObject({ name: label("a cluster name"), ...clusterFields });
export type EffectiveCluster = z.output<typeof EffectiveClusterSchema>;

/** What `defaults` and a `clusters[]` entry may say: any subset, `null` removing a node pool. */
export const ClusterPatchSchema = z.strictObject({
  backend: clusterFields.backend.unwrap().optional(),
  mk8s: backendBlock.optional(),
  soperator: backendBlock.optional(),
  gpu_driver_mode: clusterFields.gpu_driver_mode.unwrap().optional(),
  managed_driver_preset: clusterFields.managed_driver_preset.unwrap().optional(),
  allow_unsafe_nvswitch_operator: z.boolean().optional(),
  gpu_health_stabilization_seconds: clusterFields.gpu_health_stabilization_seconds.unwrap().optional(),
  gpu_health_timeout_minutes: clusterFields.gpu_health_timeout_minutes.unwrap().optional(),
  gpu_cuda_smoke: z.boolean().optional(),
  cpu_nodes: CpuPoolPatch.nullable().optional(),
  gpu_nodes: GpuPoolPatch.nullable().optional(),
  enable_gpu_cluster: clusterFields.enable_gpu_cluster.unwrap().optional(),
  infiniband_fabric: clusterFields.infiniband_fabric.unwrap().optional(),
  enable_filestore: z.boolean().optional(),
  filestore_disk_size_gibibytes: clusterFields.filestore_disk_size_gibibytes.unwrap().optional(),
  filestore_mount_path: clusterFields.filestore_mount_path.unwrap().optional(),
  filestore_mount_tag: clusterFields.filestore_mount_tag.unwrap().optional(),
  filesystem_csi_chart_repository: clusterFields.filesystem_csi_chart_repository.unwrap().optional(),
  gpu_workload_profile: clusterFields.gpu_workload_profile.unwrap().optional(),
  gpu_driver_package_repositories: clusterFields.gpu_driver_package_repositories.unwrap().optional(),
  kuberay: KubeRayPatch.optional(),
  mig: MigPatch.optional(),
});
export type ClusterPatch = z.output<typeof ClusterPatchSchema>;

export const ObjectStorageSchema = z.discriminatedUnion("enabled", [
  z.strictObject({ enabled: z.literal(false) }),
  z.strictObject({
    enabled: z.literal(true),
    storage_class: z.enum(["standard", "enhanced"]).default("standard"),
    size_gibibytes: z.int().min(1).max(1_048_576),
    /** Empty in public specs: the deploy derives a stable private name. */
    bucket_name: z
      .string()
      .regex(/^([a-z0-9][a-z0-9-]{1,61}[a-z0-9])?$/)
      .default(""),
  }),
]);
export type ObjectStorage = z.output<typeof ObjectStorageSchema>;

export const ProjectSchema = z
  .strictObject({
    name: label("a project name").optional(),
    project_id: z.string().regex(PROVIDER_ID, "a project ID (project-…)").optional(),
    clusters: z
      .array(ClusterPatchSchema.extend({ name: label("a cluster name").optional() }))
      .min(1)
      .optional(),
    object_storage: ObjectStorageSchema.optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.name === undefined) === (p.project_id === undefined))
      ctx.addIssue({ code: "custom", message: "a project has exactly one of name (created on demand) or project_id" });
  });
export type ProjectEntry = z.output<typeof ProjectSchema>;

export const FleetSpecSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION, { error: `apiVersion must be ${API_VERSION}` }),
  name: label("the fleet name"),
  /** Empty: resolved from the profile (identity.ts). */
  tenant_id: z.union([z.literal(""), z.string().regex(PROVIDER_ID, "a tenant ID (tenant-…)")]).default(""),
  region: z.string().regex(REGION, "a region such as eu-north1 or us-central1"),
  /** A ~/.nebius profile; empty: the active one. */
  profile: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default(""),
  project_prefix: z
    .string()
    .regex(/^[a-z0-9-]{0,40}$/)
    .default(""),
  ssh_public_key: z.string().max(16_384).optional(),
  defaults: ClusterPatchSchema.default({}),
  projects: z.array(ProjectSchema).min(1).max(500),
});
export type FleetSpec = z.output<typeof FleetSpecSchema>;

/** One thing wrong with a spec, at the path (`projects[1].clusters[0].gpu_nodes.count`) it concerns. */
export interface SpecIssue {
  path: string;
  message: string;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

export function zodIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): SpecIssue[] {
  return error.issues.map((i) => ({ path: formatPath([...prefix, ...i.path]), message: i.message }));
}
