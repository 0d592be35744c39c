import { describe, expect, it } from "vitest";
import { resolveCluster } from "./resolve.ts";
import { SXM_GPUS, cluster } from "./testing.ts";

/** The issues' paths and messages for a patch over the base cluster, or the resolved cluster. */
function resolve(patch: Record<string, unknown>) {
  const r = resolveCluster(cluster(patch));
  return r.ok ? r.cluster : r.issues;
}
const issuesOf = (patch: Record<string, unknown>) => {
  const r = resolveCluster(cluster(patch));
  return r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
};

describe("enable_gpu_cluster", () => {
  it.each<[string, Record<string, unknown>, boolean]>([
    ["auto, single-GPU RTX preset: off", {}, false],
    ["auto, 8-GPU SXM with a fabric: on", { gpu_nodes: SXM_GPUS, infiniband_fabric: "us-central1-a" }, true],
    ["auto, 8-GPU SXM without a fabric: off", { gpu_nodes: SXM_GPUS }, false],
    ["auto, 8-GPU RTX PCIe (no NVSwitch): off", { gpu_nodes: { preset: "8gpu-192vcpu-1744gb" } }, false],
    [
      "explicit true on 8-GPU SXM with a fabric",
      { gpu_nodes: SXM_GPUS, enable_gpu_cluster: true, infiniband_fabric: "us-central1-a" },
      true,
    ],
    [
      "explicit false on 8-GPU SXM with a fabric",
      { gpu_nodes: SXM_GPUS, enable_gpu_cluster: false, infiniband_fabric: "us-central1-a" },
      false,
    ],
    ["CPU-only cluster", { gpu_nodes: null }, false],
  ])("%s", (_, patch, on) => {
    expect(resolve(patch)).toMatchObject({ enableGpuCluster: on });
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      "true on a single-GPU preset",
      { enable_gpu_cluster: true },
      "enable_gpu_cluster: GPU clustering needs a fabric-capable 8-GPU SXM preset (gpu-rtx6000 with 1 GPUs per node is not)",
    ],
    [
      "true on 8-GPU SXM without a fabric",
      { gpu_nodes: SXM_GPUS, enable_gpu_cluster: true },
      "infiniband_fabric: enable_gpu_cluster: true needs infiniband_fabric",
    ],
    [
      "true without GPU nodes",
      { gpu_nodes: null, enable_gpu_cluster: true },
      "enable_gpu_cluster: GPU clustering needs a GPU node pool",
    ],
    [
      "auto with a fabric on an 8-GPU RTX PCIe pool (it could never use it)",
      { gpu_nodes: { preset: "8gpu-192vcpu-1744gb" }, infiniband_fabric: "us-central1-a" },
      "infiniband_fabric: a fabric is for a GPU cluster on a fabric-capable 8-GPU SXM preset (gpu-rtx6000 with 8 GPUs per node is not)",
    ],
    [
      "auto with a fabric on a single-GPU pool",
      { infiniband_fabric: "us-central1-a" },
      "infiniband_fabric: a fabric is for a GPU cluster on a fabric-capable 8-GPU SXM preset (gpu-rtx6000 with 1 GPUs per node is not)",
    ],
    [
      "auto with a fabric on a CPU-only cluster",
      { gpu_nodes: null, infiniband_fabric: "us-central1-a" },
      "infiniband_fabric: a fabric is for a GPU cluster: this cluster has no GPU node pool",
    ],
  ])("refused: %s", (_, patch, message) => {
    expect(issuesOf(patch)).toEqual([message]);
  });

  it.each<[string, Record<string, unknown>, string | null]>([
    ["with a GPU cluster", { gpu_nodes: SXM_GPUS, infiniband_fabric: "us-central1-a" }, "us-central1-a"],
    [
      "without one (explicit false)",
      { gpu_nodes: SXM_GPUS, enable_gpu_cluster: false, infiniband_fabric: "us-central1-a" },
      null,
    ],
  ])("the workers' fabric %s is %s", (_, patch, fabric) => {
    expect(resolve(patch)).toMatchObject({ infinibandFabric: fabric });
  });

  it("says why auto stayed off on an 8-GPU SXM pool", () => {
    expect(resolve({ gpu_nodes: SXM_GPUS })).toMatchObject({
      notes: ["enable_gpu_cluster auto: false, the 8-GPU SXM pool names no infiniband_fabric"],
    });
  });
});

describe("gpu_driver_mode", () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ["auto: the managed driver, cuda13.0 by default", {}, { mode: "managed", preset: "cuda13.0" }],
    ["auto with another preset", { managed_driver_preset: "cuda12.8" }, { mode: "managed", preset: "cuda12.8" }],
    ["CPU-only: no driver input", { gpu_nodes: null }, { mode: "none" }],
    ["CPU-only even with operator", { gpu_nodes: null, gpu_driver_mode: "operator" }, { mode: "none" }],
    ["a zero-count GPU pool is CPU-only", { gpu_nodes: { count: 0 } }, { mode: "none" }],
    [
      "operator without NVSwitch",
      { gpu_driver_mode: "operator" },
      { mode: "operator", unsafeNvswitchAcknowledged: false },
    ],
    [
      "operator on NVSwitch, acknowledged",
      { gpu_nodes: SXM_GPUS, gpu_driver_mode: "operator", allow_unsafe_nvswitch_operator: true },
      { mode: "operator", unsafeNvswitchAcknowledged: true },
    ],
  ])("%s", (_, patch, driver) => {
    expect(resolve(patch)).toMatchObject({ gpuDriver: driver });
  });

  it("refuses operator on an NVSwitch platform without the acknowledgement", () => {
    expect(issuesOf({ gpu_nodes: SXM_GPUS, gpu_driver_mode: "operator" })).toEqual([
      "gpu_driver_mode: operator on the NVSwitch platform gpu-h200-sxm races Fabric Manager for the host devices: use auto, or set allow_unsafe_nvswitch_operator: true to acknowledge it",
    ]);
  });

  it("a CPU-only cluster has no GPU health gate", () => {
    expect(resolve({ gpu_nodes: null })).toMatchObject({ gpuHealth: null, gpuNodes: null });
  });
});

describe("gpu_workload_profile: rtx-rendering", () => {
  it.each<[string, Record<string, unknown>]>([
    ["single-GPU RTX PRO 6000", {}],
    ["the 8-GPU RTX PCIe preset", { gpu_nodes: { preset: "8gpu-192vcpu-1744gb" } }],
    ["a zonal RTX platform", { gpu_nodes: { platform: "gpu-rtx6000-a" } }],
    ["with package repositories", { gpu_driver_package_repositories: { "ubuntu.sources": "Types: deb\n" } }],
  ])("accepted: %s", (_, patch) => {
    expect(resolve({ gpu_workload_profile: "rtx-rendering", ...patch })).toMatchObject({
      gpuDriver: { mode: "rtx-rendering" },
      gpuWorkloadProfile: "rtx-rendering",
      enableGpuCluster: false,
    });
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "on H200",
      { gpu_nodes: { platform: "gpu-h200-sxm" } },
      ["gpu_nodes.platform: rtx-rendering runs on RTX PRO 6000 (gpu-rtx6000), not gpu-h200-sxm"],
    ],
    [
      "another preset",
      { gpu_nodes: { preset: "2gpu-48vcpu-436gb" } },
      ["gpu_nodes.preset: rtx-rendering supports 1gpu-24vcpu-218gb or 8gpu-192vcpu-1744gb, not 2gpu-48vcpu-436gb"],
    ],
    [
      "with a GPU cluster",
      { enable_gpu_cluster: true },
      [
        "enable_gpu_cluster: GPU clustering needs a fabric-capable 8-GPU SXM preset (gpu-rtx6000 with 1 GPUs per node is not)",
      ],
    ],
    [
      "a repository file name with a path",
      { gpu_driver_package_repositories: { "../etc/passwd": "x" } },
      ["gpu_driver_package_repositories.../etc/passwd: a plain file name (letters, digits, '.', '_', '-')"],
    ],
    ["without GPU nodes", { gpu_nodes: null }, ["gpu_workload_profile: rtx-rendering needs a GPU node pool"]],
    [
      "with an explicit operator driver mode (it would be dropped)",
      { gpu_driver_mode: "operator" },
      [
        "gpu_driver_mode: rtx-rendering sets up the GPU Operator's mounted drivers itself: leave gpu_driver_mode at auto",
      ],
    ],
    [
      "with MIG",
      {
        mig: { enabled: true, strategy: "mixed", config: "all-balanced" },
        gpu_nodes: { count: 2, capacity_block_group: "capacityblockgroup-e00mig00001" },
      },
      ["mig: MIG does not combine with gpu_workload_profile: rtx-rendering (rendering is the profile without MIG)"],
    ],
  ])("refused: %s", (_, patch, messages) => {
    expect(issuesOf({ gpu_workload_profile: "rtx-rendering", ...patch })).toEqual(messages);
  });

  it("package repositories without the profile are refused", () => {
    expect(issuesOf({ gpu_driver_package_repositories: { "a.list": "deb x" } })).toEqual([
      "gpu_driver_package_repositories: package repositories are for gpu_workload_profile: rtx-rendering",
    ]);
  });
});

describe("mig", () => {
  const mig = { enabled: true, strategy: "mixed", config: "all-balanced" };
  const reserved = { count: 2, capacity_block_group: "capacityblockgroup-e00mig00001" };
  it("two reserved single-GPU RTX workers with 128 GiB boot disks", () => {
    expect(resolve({ mig, gpu_nodes: reserved })).toMatchObject({ mig: { strategy: "mixed", config: "all-balanced" } });
  });
  it("disabled: no MIG", () => {
    expect(resolve({ mig: { enabled: false } })).toMatchObject({ mig: null });
  });
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "strategy single",
      { mig: { ...mig, strategy: "single" }, gpu_nodes: reserved },
      ["mig.strategy: MIG is supported with strategy: mixed only"],
    ],
    [
      "another config",
      { mig: { ...mig, config: "all-1g.24gb" }, gpu_nodes: reserved },
      ["mig.config: MIG is supported with config: all-balanced only"],
    ],
    [
      "three workers",
      { mig, gpu_nodes: { ...reserved, count: 3 } },
      ["mig: MIG needs exactly two GPU workers (got 3)"],
    ],
    [
      "on-demand capacity",
      { mig, gpu_nodes: { count: 2 } },
      ["mig: MIG needs reserved capacity: set gpu_nodes.capacity_block_group"],
    ],
    [
      "256 GiB boot disks",
      { mig, gpu_nodes: { ...reserved, boot_disk_gibibytes: 256 } },
      ["mig: MIG needs 128 GiB boot disks (got 256)"],
    ],
    [
      "a zonal RTX platform (the rendering profile's allowance, not MIG's)",
      { mig, gpu_nodes: { ...reserved, platform: "gpu-rtx6000-a" } },
      ["mig: MIG needs gpu-rtx6000 / 1gpu-24vcpu-218gb workers (got gpu-rtx6000-a / 1gpu-24vcpu-218gb)"],
    ],
    [
      "the 8-GPU RTX preset",
      { mig, gpu_nodes: { ...reserved, preset: "8gpu-192vcpu-1744gb" } },
      ["mig: MIG needs gpu-rtx6000 / 1gpu-24vcpu-218gb workers (got gpu-rtx6000 / 8gpu-192vcpu-1744gb)"],
    ],
    [
      "H200",
      { mig, gpu_nodes: { ...reserved, ...SXM_GPUS } },
      ["mig: MIG needs gpu-rtx6000 / 1gpu-24vcpu-218gb workers (got gpu-h200-sxm / 8gpu-128vcpu-1600gb)"],
    ],
  ])("refused: %s", (_, patch, messages) => {
    expect(issuesOf(patch)).toEqual(messages);
  });
});

describe("kuberay", () => {
  const ray = { enabled: true, worker_replicas: 2, worker_cpus: 2, worker_memory_gib: 4 };
  it("a fixed CPU worker group within one node and the pool's aggregate", () => {
    expect(resolve({ kuberay: ray })).toMatchObject({
      kuberay: { workerReplicas: 2, workerCpus: 2, workerMemoryGib: 4, headCpus: 1, headMemoryGib: 2 },
    });
  });
  it("exactly the pool's aggregate is accepted", () => {
    // 4 nodes x 2 vCPU / 8 GiB: head 2+2 and 3 workers of 2/8 -> 8 vCPU, 32 GiB.
    const patch = {
      cpu_nodes: { count: 4, preset: "2vcpu-8gb" },
      kuberay: {
        enabled: true,
        worker_replicas: 3,
        worker_cpus: 2,
        worker_memory_gib: 8,
        head_cpus: 2,
        head_memory_gib: 8,
      },
    };
    expect(resolve(patch)).toMatchObject({ kuberay: { workerReplicas: 3 } });
  });
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "a worker larger than a node",
      { kuberay: { ...ray, worker_cpus: 64 } },
      [
        "kuberay.worker_cpus: a worker pod (64 CPU, 4 GiB) is larger than one CPU node (48 vCPU, 192 GiB)",
        "kuberay.worker_replicas: the RayCluster requests 129 CPU and 10 GiB, above the CPU pool's 48 vCPU and 192 GiB",
      ],
    ],
    [
      "a head larger than a node",
      { kuberay: { ...ray, head_memory_gib: 200 } },
      [
        "kuberay.head_cpus: a head pod (1 CPU, 200 GiB) is larger than one CPU node (48 vCPU, 192 GiB)",
        "kuberay.worker_replicas: the RayCluster requests 5 CPU and 208 GiB, above the CPU pool's 48 vCPU and 192 GiB",
      ],
    ],
    [
      "requests above the aggregate",
      { kuberay: { ...ray, worker_replicas: 24 } },
      ["kuberay.worker_replicas: the RayCluster requests 49 CPU and 98 GiB, above the CPU pool's 48 vCPU and 192 GiB"],
    ],
    [
      "no CPU nodes",
      { cpu_nodes: null, kuberay: ray },
      ["kuberay: the RayCluster runs on CPU nodes: declare cpu_nodes with a count"],
    ],
  ])("refused: %s", (_, patch, messages) => {
    expect(issuesOf(patch)).toEqual(messages);
  });
});

describe("node pools, backends, capacity blocks", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "no workers at all",
      { cpu_nodes: null, gpu_nodes: null },
      [": a cluster needs at least one worker node (cpu_nodes or gpu_nodes)"],
    ],
    [
      "a GPU preset on the CPU pool",
      { cpu_nodes: { preset: "1gpu-24vcpu-218gb" } },
      ["cpu_nodes: cpu_nodes needs a CPU platform and preset (got cpu-d3 1gpu-24vcpu-218gb)"],
    ],
    [
      "a CPU platform for GPUs",
      { gpu_nodes: { platform: "cpu-d3" } },
      ["gpu_nodes: gpu_nodes needs a GPU platform and preset (got cpu-d3 1gpu-24vcpu-218gb)"],
    ],
    [
      "a preset that names no resources",
      { cpu_nodes: { preset: "large" } },
      ["cpu_nodes.preset: preset large does not name its resources (<n>vcpu-<n>gb, <n>gpu-<n>vcpu-<n>gb)"],
    ],
    [
      "a block for no GPU worker",
      { gpu_nodes: { count: 0, capacity_block_group: "capacityblockgroup-e00x0001" } },
      ["gpu_nodes.capacity_block_group: a capacity block group binds GPU workers: gpu_nodes.count is 0"],
    ],
    [
      "a soperator block on mk8s",
      { soperator: { slurm_nodes: 2 } },
      ["soperator: a soperator block needs backend: soperator"],
    ],
    [
      "an mk8s block on soperator",
      { backend: "soperator", mk8s: { version: "1.31" } },
      ["mk8s: an mk8s block needs backend: mk8s (absent means mk8s)"],
    ],
  ])("refused: %s", (_, patch, messages) => {
    expect(issuesOf(patch)).toEqual(messages);
  });

  it("resolves the pools' resources, the GPU family and the backend's own settings", () => {
    expect(
      resolve({
        backend: "soperator",
        soperator: { slurm_nodes: 2 },
        gpu_nodes: { ...SXM_GPUS, capacity_block_group: "capacityblockgroup-e00x0001" },
      }),
    ).toMatchObject({
      backend: "soperator",
      backendSettings: { slurm_nodes: 2 },
      cpuNodes: { count: 1, vcpusPerNode: 48, memoryGibPerNode: 192, bootDiskGibibytes: 128 },
      gpuNodes: {
        count: 2,
        gpusPerNode: 8,
        gpuFamily: "h200",
        nvswitch: true,
        capacityBlockGroup: "capacityblockgroup-e00x0001",
      },
    });
  });

  it("filestore settings only when enabled", () => {
    expect(resolve({ enable_filestore: false })).toMatchObject({ filestore: null });
    expect(resolve({ enable_filestore: true, filestore_disk_size_gibibytes: 2048 })).toMatchObject({
      filestore: { sizeGibibytes: 2048, mountPath: "/mnt/data", mountTag: "npa-shared-fs", csiChartRepository: null },
    });
  });
});
