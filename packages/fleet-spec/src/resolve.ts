/**
 * The resolution rules: from an effective cluster (defaults merged) to what would be deployed,
 * or the issues that stop it. Each rule is a small function of its own, table-tested in
 * resolve.test.ts with a passing and a failing case.
 */
import type { GpuDriver, ResolvedCluster, ResolvedGpuPool, ResolvedKubeRay, ResolvedPool } from "./output.ts";
import type { EffectiveCluster, SpecIssue } from "./spec.ts";
import { SAFE_FILENAME } from "./spec.ts";
import {
  gpuFamily,
  isRtxPro6000,
  isSxm,
  parsePreset,
  RTX_RENDERING_PRESETS,
  RTX_SINGLE_GPU_PRESET,
} from "./presets.ts";

/** The one platform the seed allows MIG on. */
const RTX_MIG_PLATFORM = "gpu-rtx6000";

export type Resolution = { ok: true; cluster: ResolvedCluster } | { ok: false; issues: SpecIssue[] };

type Issues = SpecIssue[];
const issue = (issues: Issues, path: string, message: string) => void issues.push({ path, message });

function resolvePool(
  c: EffectiveCluster,
  which: "cpu_nodes" | "gpu_nodes",
  issues: Issues,
): (ResolvedPool & { gpus: number }) | null {
  const pool = c[which];
  if (!pool || pool.count === 0) return null;
  const shape = parsePreset(pool.preset);
  if (!shape) {
    issue(
      issues,
      `${which}.preset`,
      `preset ${pool.preset} does not name its resources (<n>vcpu-<n>gb, <n>gpu-<n>vcpu-<n>gb)`,
    );
    return null;
  }
  if (which === "cpu_nodes" && (shape.gpus > 0 || !pool.platform.startsWith("cpu-")))
    issue(issues, which, `cpu_nodes needs a CPU platform and preset (got ${pool.platform} ${pool.preset})`);
  if (which === "gpu_nodes" && (shape.gpus === 0 || !gpuFamily(pool.platform)))
    issue(issues, which, `gpu_nodes needs a GPU platform and preset (got ${pool.platform} ${pool.preset})`);
  return {
    count: pool.count,
    platform: pool.platform,
    preset: pool.preset,
    vcpusPerNode: shape.vcpus,
    memoryGibPerNode: shape.memoryGib,
    bootDiskGibibytes: pool.boot_disk_gibibytes,
    gpus: shape.gpus,
  };
}

/** GPU clustering (InfiniBand) only on fabric-capable 8-GPU SXM presets that name their fabric. */
export function resolveGpuCluster(
  c: Pick<EffectiveCluster, "enable_gpu_cluster" | "infiniband_fabric">,
  gpu: Pick<ResolvedGpuPool, "gpusPerNode" | "platform" | "nvswitch"> | null,
  issues: Issues,
  notes: string[],
): boolean {
  const capable = gpu !== null && gpu.nvswitch && gpu.gpusPerNode === 8;
  // A fabric names where a GPU cluster is made; on a pool that can never be clustered it would be
  // silently unused, so the spec is wrong about the hardware. (An explicit false keeps a note.)
  if (c.enable_gpu_cluster === "auto" && !capable && c.infiniband_fabric)
    issue(
      issues,
      "infiniband_fabric",
      gpu
        ? `a fabric is for a GPU cluster on a fabric-capable 8-GPU SXM preset (${gpu.platform} with ${gpu.gpusPerNode} GPUs per node is not)`
        : "a fabric is for a GPU cluster: this cluster has no GPU node pool",
    );
  if (c.enable_gpu_cluster === "auto") {
    const on = capable && c.infiniband_fabric !== "";
    if (capable && !on) notes.push("enable_gpu_cluster auto: false, the 8-GPU SXM pool names no infiniband_fabric");
    return on;
  }
  if (c.enable_gpu_cluster) {
    if (!capable)
      issue(
        issues,
        "enable_gpu_cluster",
        gpu
          ? `GPU clustering needs a fabric-capable 8-GPU SXM preset (${gpu.platform} with ${gpu.gpusPerNode} GPUs per node is not)`
          : "GPU clustering needs a GPU node pool",
      );
    else if (!c.infiniband_fabric)
      issue(issues, "infiniband_fabric", "enable_gpu_cluster: true needs infiniband_fabric");
    return capable && c.infiniband_fabric !== "";
  }
  return false;
}

/** The driver strategy: none for CPU-only, managed image (auto), the GPU Operator, or the RTX profile. */
export function resolveGpuDriver(
  c: Pick<
    EffectiveCluster,
    "gpu_driver_mode" | "managed_driver_preset" | "allow_unsafe_nvswitch_operator" | "gpu_workload_profile"
  >,
  gpu: Pick<ResolvedGpuPool, "nvswitch" | "platform"> | null,
  issues: Issues,
): GpuDriver {
  if (!gpu) return { mode: "none" };
  if (c.gpu_workload_profile === "rtx-rendering") {
    // The profile brings its own GPU Operator driver setup; an explicit operator would be dropped.
    if (c.gpu_driver_mode === "operator")
      issue(
        issues,
        "gpu_driver_mode",
        "rtx-rendering sets up the GPU Operator's mounted drivers itself: leave gpu_driver_mode at auto",
      );
    return { mode: "rtx-rendering" };
  }
  if (c.gpu_driver_mode === "auto") return { mode: "managed", preset: c.managed_driver_preset };
  if (gpu.nvswitch && !c.allow_unsafe_nvswitch_operator)
    issue(
      issues,
      "gpu_driver_mode",
      `operator on the NVSwitch platform ${gpu.platform} races Fabric Manager for the host devices: use auto, or set allow_unsafe_nvswitch_operator: true to acknowledge it`,
    );
  return { mode: "operator", unsafeNvswitchAcknowledged: gpu.nvswitch && c.allow_unsafe_nvswitch_operator };
}

/**
 * RTX rendering: RTX PRO 6000 only, its two supported presets. Neither is SXM, so the GPU-cluster
 * rule already refuses a fabric and the driver never takes the NVSwitch operator path.
 */
export function checkRtxRendering(
  c: Pick<EffectiveCluster, "gpu_workload_profile" | "gpu_driver_package_repositories">,
  gpu: Pick<ResolvedGpuPool, "platform" | "preset"> | null,
  issues: Issues,
): void {
  const repos = Object.keys(c.gpu_driver_package_repositories);
  if (c.gpu_workload_profile !== "rtx-rendering") {
    if (repos.length)
      issue(
        issues,
        "gpu_driver_package_repositories",
        "package repositories are for gpu_workload_profile: rtx-rendering",
      );
    return;
  }
  if (!gpu) return issue(issues, "gpu_workload_profile", "rtx-rendering needs a GPU node pool");
  if (!isRtxPro6000(gpu.platform))
    issue(issues, "gpu_nodes.platform", `rtx-rendering runs on RTX PRO 6000 (gpu-rtx6000), not ${gpu.platform}`);
  if (!(RTX_RENDERING_PRESETS as readonly string[]).includes(gpu.preset))
    issue(
      issues,
      "gpu_nodes.preset",
      `rtx-rendering supports ${RTX_RENDERING_PRESETS.join(" or ")}, not ${gpu.preset}`,
    );
  for (const name of repos)
    if (!SAFE_FILENAME.test(name) || name.includes(".."))
      issue(issues, `gpu_driver_package_repositories.${name}`, "a plain file name (letters, digits, '.', '_', '-')");
}

/** MIG on RTX PRO 6000: mixed/all-balanced, exactly two reserved single-GPU workers, 128 GiB boot disks. */
export function checkMig(
  c: Pick<EffectiveCluster, "mig" | "gpu_workload_profile">,
  gpu: Pick<ResolvedGpuPool, "platform" | "preset" | "count" | "capacityBlockGroup" | "bootDiskGibibytes"> | null,
  issues: Issues,
): { strategy: "mixed"; config: string } | null {
  if (!c.mig.enabled) return null;
  const at = (p: string, m: string) => issue(issues, `mig${p}`, m);
  if (c.mig.strategy !== "mixed") at(".strategy", "MIG is supported with strategy: mixed only");
  if (c.mig.config !== "all-balanced") at(".config", "MIG is supported with config: all-balanced only");
  if (!gpu) {
    at("", "MIG needs a GPU node pool");
    return null;
  }
  // The seed's RTX rendering is the profile *without* MIG: the two are separate policies.
  if (c.gpu_workload_profile === "rtx-rendering")
    at("", "MIG does not combine with gpu_workload_profile: rtx-rendering (rendering is the profile without MIG)");
  // Exactly the seed's platform: a zonal RTX platform is the rendering profile's allowance, not MIG's.
  if (gpu.platform !== RTX_MIG_PLATFORM || gpu.preset !== RTX_SINGLE_GPU_PRESET)
    at("", `MIG needs ${RTX_MIG_PLATFORM} / ${RTX_SINGLE_GPU_PRESET} workers (got ${gpu.platform} / ${gpu.preset})`);
  if (gpu.count !== 2) at("", `MIG needs exactly two GPU workers (got ${gpu.count})`);
  if (!gpu.capacityBlockGroup) at("", "MIG needs reserved capacity: set gpu_nodes.capacity_block_group");
  if (gpu.bootDiskGibibytes !== 128) at("", `MIG needs 128 GiB boot disks (got ${gpu.bootDiskGibibytes})`);
  return { strategy: "mixed", config: c.mig.config };
}

/**
 * A fixed CPU RayCluster: no head or worker pod larger than one CPU node, and the fixed requests
 * within the CPU pool's nominal aggregate (system pods still need room; that is the operator's).
 */
export function resolveKubeRay(
  c: Pick<EffectiveCluster, "kuberay">,
  cpu: Pick<ResolvedPool, "count" | "vcpusPerNode" | "memoryGibPerNode"> | null,
  issues: Issues,
): ResolvedKubeRay | null {
  if (!c.kuberay.enabled) return null;
  const k = c.kuberay;
  const ray: ResolvedKubeRay = {
    workerReplicas: k.worker_replicas,
    workerCpus: k.worker_cpus,
    workerMemoryGib: k.worker_memory_gib,
    headCpus: k.head_cpus,
    headMemoryGib: k.head_memory_gib,
  };
  if (!cpu) {
    issue(issues, "kuberay", "the RayCluster runs on CPU nodes: declare cpu_nodes with a count");
    return ray;
  }
  for (const [pod, cpus, mem] of [
    ["worker", ray.workerCpus, ray.workerMemoryGib],
    ["head", ray.headCpus, ray.headMemoryGib],
  ] as const) {
    if (cpus > cpu.vcpusPerNode || mem > cpu.memoryGibPerNode)
      issue(
        issues,
        `kuberay.${pod}_cpus`,
        `a ${pod} pod (${cpus} CPU, ${mem} GiB) is larger than one CPU node (${cpu.vcpusPerNode} vCPU, ${cpu.memoryGibPerNode} GiB)`,
      );
  }
  const cpus = ray.headCpus + ray.workerReplicas * ray.workerCpus;
  const mem = ray.headMemoryGib + ray.workerReplicas * ray.workerMemoryGib;
  if (cpus > cpu.count * cpu.vcpusPerNode || mem > cpu.count * cpu.memoryGibPerNode)
    issue(
      issues,
      "kuberay.worker_replicas",
      `the RayCluster requests ${cpus} CPU and ${mem} GiB, above the CPU pool's ${cpu.count * cpu.vcpusPerNode} vCPU and ${cpu.count * cpu.memoryGibPerNode} GiB`,
    );
  return ray;
}

/** A pool as the plan shows it (GPUs per node are the GPU pool's own field). */
function withoutGpus(p: ResolvedPool & { gpus: number }): ResolvedPool;
function withoutGpus(p: (ResolvedPool & { gpus: number }) | null): ResolvedPool | null;
function withoutGpus(p: (ResolvedPool & { gpus: number }) | null): ResolvedPool | null {
  if (!p) return null;
  const { gpus: _gpus, ...pool } = p;
  return pool;
}

export function resolveCluster(c: EffectiveCluster): Resolution {
  const issues: Issues = [];
  const notes: string[] = [];
  const cpuNodes = withoutGpus(resolvePool(c, "cpu_nodes", issues));
  const gpuRaw = resolvePool(c, "gpu_nodes", issues);
  const gpuNodes: ResolvedGpuPool | null = gpuRaw && {
    ...withoutGpus(gpuRaw),
    gpusPerNode: gpuRaw.gpus,
    gpuFamily: gpuFamily(gpuRaw.platform) ?? "",
    nvswitch: isSxm(gpuRaw.platform) && gpuRaw.gpus === 8,
    capacityBlockGroup: c.gpu_nodes?.capacity_block_group || null,
  };
  if (!cpuNodes && !gpuNodes) issue(issues, "", "a cluster needs at least one worker node (cpu_nodes or gpu_nodes)");
  if (!gpuNodes && c.gpu_nodes?.capacity_block_group)
    issue(issues, "gpu_nodes.capacity_block_group", "a capacity block group binds GPU workers: gpu_nodes.count is 0");
  if (c.backend === "mk8s" && c.soperator) issue(issues, "soperator", "a soperator block needs backend: soperator");
  if (c.backend === "soperator" && c.mk8s)
    issue(issues, "mk8s", "an mk8s block needs backend: mk8s (absent means mk8s)");
  const enableGpuCluster = resolveGpuCluster(c, gpuNodes, issues, notes);
  if (!enableGpuCluster && c.infiniband_fabric && c.enable_gpu_cluster === false)
    notes.push(`infiniband_fabric ${c.infiniband_fabric} is unused: enable_gpu_cluster is false`);
  const gpuDriver = resolveGpuDriver(c, gpuNodes, issues);
  if (gpuDriver.mode === "none" && c.gpu_workload_profile === null && c.gpu_driver_mode === "operator")
    notes.push("CPU-only cluster: no GPU driver input");
  checkRtxRendering(c, gpuNodes, issues);
  const mig = checkMig(c, gpuNodes, issues);
  const kuberay = resolveKubeRay(c, cpuNodes, issues);
  if (issues.length) return { ok: false, issues };
  return {
    ok: true,
    cluster: {
      name: c.name,
      backend: c.backend,
      backendSettings: (c.backend === "mk8s" ? c.mk8s : c.soperator) ?? {},
      cpuNodes,
      gpuNodes,
      enableGpuCluster,
      // A fabric is where a GPU cluster is made: without one the workers are on none.
      infinibandFabric: enableGpuCluster ? c.infiniband_fabric || null : null,
      gpuDriver,
      gpuWorkloadProfile: c.gpu_workload_profile,
      gpuHealth: gpuNodes
        ? {
            stabilizationSeconds: c.gpu_health_stabilization_seconds,
            timeoutMinutes: c.gpu_health_timeout_minutes,
            cudaSmoke: c.gpu_cuda_smoke,
          }
        : null,
      filestore: c.enable_filestore
        ? {
            sizeGibibytes: c.filestore_disk_size_gibibytes,
            mountPath: c.filestore_mount_path,
            mountTag: c.filestore_mount_tag,
            csiChartRepository: c.filesystem_csi_chart_repository || null,
          }
        : null,
      kuberay,
      mig,
      driverPackageRepositories: Object.keys(c.gpu_driver_package_repositories).sort(),
      notes,
    },
  };
}
