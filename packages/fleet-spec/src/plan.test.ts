import { describe, expect, it } from "vitest";
import { parseFleetSpecText, loadFleetSpec, type LoadedFleet } from "./load.ts";
import { FleetPlanSchema } from "./output.ts";
import { buildPlan } from "./plan.ts";
import { GIB, quotaDemand } from "./quotas.ts";
import { fixtureText } from "./testing.ts";

const identity = { tenantId: "tenant-e00fleet1test00", profile: "", tenantFrom: "spec" as const };
function fleet(name: string): LoadedFleet {
  const r = parseFleetSpecText(fixtureText(name));
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.fleet;
}

describe("plan of the seed's example", () => {
  it("creates fleet1-test-a and fleet1-test-b, each with the defaults' cluster", () => {
    const r = buildPlan(fleet("fleet1-test.yaml"), identity);
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(FleetPlanSchema.parse(r.plan)).toEqual(r.plan);
    expect(r.plan).toMatchObject({
      kind: "FleetPlan",
      version: 1,
      fleet: "fleet1-test",
      tenantId: "tenant-e00fleet1test00",
      region: "us-central1",
      projectPrefix: "fleet1-test-",
      selection: { projects: null, clusters: null },
    });
    expect(r.plan.projects.map((p) => [p.key, p.action, p.projectName, p.objectStorage])).toEqual([
      ["a", "create", "fleet1-test-a", { storageClass: "enhanced", sizeGibibytes: 1024, bucketName: null }],
      ["b", "create", "fleet1-test-b", null],
    ]);
    expect(r.plan.projects[0]?.clusters).toEqual([
      {
        name: "default",
        backend: "mk8s",
        backendSettings: {},
        cpuNodes: {
          count: 1,
          platform: "cpu-d3",
          preset: "48vcpu-192gb",
          vcpusPerNode: 48,
          memoryGibPerNode: 192,
          bootDiskGibibytes: 128,
        },
        gpuNodes: {
          count: 1,
          platform: "gpu-rtx6000",
          preset: "1gpu-24vcpu-218gb",
          vcpusPerNode: 24,
          memoryGibPerNode: 218,
          bootDiskGibibytes: 128,
          gpusPerNode: 1,
          gpuFamily: "rtx6000",
          nvswitch: false,
          capacityBlockGroup: null,
        },
        enableGpuCluster: false,
        infinibandFabric: null,
        gpuDriver: { mode: "managed", preset: "cuda13.0" },
        gpuWorkloadProfile: null,
        gpuHealth: { stabilizationSeconds: 120, timeoutMinutes: 60, cudaSmoke: true },
        filestore: { sizeGibibytes: 1024, mountPath: "/mnt/data", mountTag: "npa-shared-fs", csiChartRepository: null },
        kuberay: null,
        mig: null,
        driverPackageRepositories: [],
        notes: [],
      },
    ]);
  });
});

describe("selectors", () => {
  const mixed = () => fleet("fleet-mixed.yaml");
  const keys = (r: ReturnType<typeof buildPlan>) =>
    r.ok ? r.plan.projects.map((p) => `${p.key}:${p.clusters.map((c) => c.name).join(",")}`) : r.issues;

  it.each<[string, Parameters<typeof buildPlan>[2], string[]]>([
    ["none: everything", {}, ["c:train,infer,slurm", "project-e00existing123:default"]],
    ["--only-projects by name", { onlyProjects: ["c"] }, ["c:train,infer,slurm"]],
    ["--only-projects by project_id", { onlyProjects: ["project-e00existing123"] }, ["project-e00existing123:default"]],
    ["--only-clusters drops projects left with none", { onlyClusters: ["train", "infer"] }, ["c:train,infer"]],
    [
      "both",
      { onlyProjects: ["c", "project-e00existing123"], onlyClusters: ["default"] },
      ["project-e00existing123:default"],
    ],
  ])("%s", (_, options, expected) => {
    expect(keys(buildPlan(mixed(), identity, options))).toEqual(expected);
  });

  it.each<[string, Parameters<typeof buildPlan>[2], string[]]>([
    ["an unknown project", { onlyProjects: ["c", "zz"] }, ["--only-projects: no project zz in the spec"]],
    ["an unknown cluster", { onlyClusters: ["trian"] }, ["--only-clusters: no cluster trian in the selected projects"]],
    [
      "a cluster outside the selected projects",
      { onlyProjects: ["project-e00existing123"], onlyClusters: ["train"] },
      ["--only-clusters: no cluster train in the selected projects"],
    ],
    [
      "a prefix that cannot name a project",
      { projectPrefix: "Team_" },
      ["--project-prefix: a-z, 0-9 and '-', at most 40"],
    ],
  ])("refused, failing closed: %s", (_, options, messages) => {
    const r = buildPlan(mixed(), identity, options);
    expect(r).toMatchObject({ ok: false, kind: "selector" });
    expect(!r.ok && r.issues.map((i) => `${i.path}: ${i.message}`)).toEqual(messages);
  });

  it("--project-prefix renames created projects, never existing ones", () => {
    const r = buildPlan(mixed(), identity, { projectPrefix: "q-" });
    expect(r.ok && r.plan.projects.map((p) => [p.projectName, p.projectId])).toEqual([
      ["q-c", null],
      [null, "project-e00existing123"],
    ]);
  });
});

describe("rules across a project", () => {
  const spec = (projects: unknown[]) => {
    const r = loadFleetSpec({
      apiVersion: "npa.fleet/v0.0.1",
      name: "f",
      region: "eu-north1",
      defaults: { cpu_nodes: { count: 1, platform: "cpu-d3", preset: "4vcpu-16gb" } },
      projects,
    });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    return r.fleet;
  };
  const storage = { enabled: true, storage_class: "standard", size_gibibytes: 10 };

  it("storage needs a selected mk8s target in its project", () => {
    const f = spec([
      { name: "a", object_storage: storage, clusters: [{ name: "k" }, { name: "s", backend: "soperator" }] },
    ]);
    expect(buildPlan(f, identity).ok).toBe(true);
    const r = buildPlan(f, identity, { onlyClusters: ["s"] });
    expect(r).toEqual({
      ok: false,
      kind: "spec",
      issues: [
        {
          path: "projects[0].object_storage",
          message: "storage is reconciled through an mk8s target: select at least one mk8s cluster of this project",
        },
      ],
    });
  });

  it("a rule broken in one cluster is reported at that cluster's path", () => {
    const f = spec([{ name: "a" }, { name: "b", clusters: [{ name: "x", enable_gpu_cluster: true }] }]);
    expect(buildPlan(f, identity)).toEqual({
      ok: false,
      kind: "spec",
      issues: [{ path: "projects[1].clusters[0].enable_gpu_cluster", message: "GPU clustering needs a GPU node pool" }],
    });
  });
});

describe("quota demand", () => {
  it("the example: per cluster workers, disks, vCPUs, GPUs, filesystems, allocations; per new project its VPC; the bucket", () => {
    const r = buildPlan(fleet("fleet1-test.yaml"), identity);
    if (!r.ok) throw new Error("plan");
    const demand = quotaDemand(r.plan, { newProjects: new Set(["a", "b"]), validatedBlocks: new Set() });
    expect(Object.fromEntries(demand.map((d) => [d.name, d.required]))).toEqual({
      "compute.disk.count": 4,
      "compute.disk.size.network-ssd": 4 * 128 * GIB,
      "compute.filesystem.count": 2,
      "compute.filesystem.size.network-ssd": 2 * 1024 * GIB,
      "compute.instance.count": 4,
      "compute.instance.gpu.rtx6000": 2,
      "compute.instance.non-gpu.vcpu": 96,
      "storage.bucket.count": 1,
      "storage.bucket.size.enhanced-throughput": 1024 * GIB,
      "vpc.allocation.count": 8,
      "vpc.network.count": 2,
      "vpc.pool.count": 4,
      "vpc.route.count": 2,
      "vpc.routetable.count": 2,
      "vpc.subnet.count": 2,
    });
    expect(demand.find((d) => d.name === "vpc.allocation.count")?.from).toEqual([
      { subject: "a/default", amount: 4 },
      { subject: "b/default", amount: 4 },
    ]);
  });

  it("an existing project adds no VPC objects; GPUs on a validated block leave the on-demand GPU quota only", () => {
    const r = buildPlan(fleet("fleet-mixed.yaml"), identity, { onlyClusters: ["train"] });
    if (!r.ok) throw new Error("plan");
    const names = (validated: string[]) =>
      Object.fromEntries(
        quotaDemand(r.plan, { newProjects: new Set(), validatedBlocks: new Set(validated) }).map((d) => [
          d.name,
          d.required,
        ]),
      );
    expect(names([])).toMatchObject({
      "compute.instance.gpu.h200": 16,
      "compute.gpucluster.count": 1,
      "compute.instance.count": 3,
    });
    const reserved = names(["capacityblockgroup-e00train0001"]);
    expect(reserved["compute.instance.gpu.h200"]).toBeUndefined();
    expect(reserved).toMatchObject({
      "compute.gpucluster.count": 1,
      "compute.instance.count": 3,
      "compute.disk.count": 3,
    });
    expect(reserved["vpc.network.count"]).toBeUndefined();
    // Only the GPU quota: every other line is the same as without the reservation.
    const { "compute.instance.gpu.h200": _gpus, ...rest } = names([]);
    expect(reserved).toEqual(rest);
  });
});
