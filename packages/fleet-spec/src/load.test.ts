import { describe, expect, it } from "vitest";
import { parseFleetSpecText, loadFleetSpec } from "./load.ts";
import { deepMerge } from "./merge.ts";
import { fixtureText } from "./testing.ts";

const base = { apiVersion: "npa.fleet/v0.0.1", name: "f1", region: "eu-north1" };
const issues = (raw: unknown) => {
  const r = loadFleetSpec(raw);
  return r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
};
const defaults = { cpu_nodes: { count: 1, platform: "cpu-d3", preset: "16vcpu-64gb" } };

describe("the seed's example spec", () => {
  it("loads: two projects, each with one cluster made from the defaults", () => {
    const r = parseFleetSpecText(fixtureText("fleet1-test.yaml"));
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.fleet.projects.map((p) => [p.key, p.path, p.clusters.map((c) => [c.cluster.name, c.path])])).toEqual([
      ["a", "projects[0]", [["default", "projects[0]"]]],
      ["b", "projects[1]", [["default", "projects[1]"]]],
    ]);
    expect(r.fleet.projects[1]?.clusters[0]?.cluster).toMatchObject({
      backend: "mk8s",
      gpu_driver_mode: "auto",
      managed_driver_preset: "cuda13.0",
      cpu_nodes: { count: 1, platform: "cpu-d3", preset: "48vcpu-192gb", boot_disk_gibibytes: 128 },
      gpu_nodes: { count: 1, platform: "gpu-rtx6000", preset: "1gpu-24vcpu-218gb", capacity_block_group: "" },
      enable_filestore: true,
      filestore_disk_size_gibibytes: 1024,
      kuberay: { enabled: false },
    });
  });
});

describe("errors name the path", () => {
  it.each<[string, unknown, string[]]>([
    [
      "another apiVersion",
      { ...base, apiVersion: "npa.fleet/v1", projects: [{ name: "a" }] },
      ["apiVersion: apiVersion must be npa.fleet/v0.0.1"],
    ],
    ["no projects", { ...base, projects: [] }, ["projects: Too small: expected array to have >=1 items"]],
    [
      "a misspelt setting",
      { ...base, defaults: { ...defaults, enable_filestor: true }, projects: [{ name: "a" }] },
      ['defaults: Unrecognized key: "enable_filestor"'],
    ],
    [
      "a count that is not an integer, deep in a cluster",
      { ...base, defaults, projects: [{ name: "a" }, { name: "b", clusters: [{ gpu_nodes: { count: 1.5 } }] }] },
      ["projects[1].clusters[0].gpu_nodes.count: Invalid input: expected int, received number"],
    ],
    [
      "both name and project_id",
      { ...base, defaults, projects: [{ name: "a", project_id: "project-e00abcd" }] },
      ["projects[0]: a project has exactly one of name (created on demand) or project_id"],
    ],
    [
      "a project name that is not a DNS label",
      { ...base, defaults, projects: [{ name: "Team_A" }] },
      ["projects[0].name: a project name must be a DNS label (a-z, 0-9, '-', at most 63)"],
    ],
    [
      "the same project twice",
      { ...base, defaults, projects: [{ name: "a" }, { name: "a" }] },
      ["projects[1]: project a is declared twice (also at projects[0])"],
    ],
    [
      "the same cluster name twice in a project",
      { ...base, defaults, projects: [{ name: "a", clusters: [{ name: "x" }, { name: "x" }] }] },
      ["projects[0].clusters[1]: cluster x is declared twice (also at projects[0].clusters[0])"],
    ],
    [
      "a setting missing after the merge",
      { ...base, defaults: { gpu_nodes: { count: 1, platform: "gpu-h100-sxm" } }, projects: [{ name: "a" }] },
      ["projects[0].gpu_nodes.preset: Invalid input: expected string, received undefined (after merging defaults)"],
    ],
  ])("%s", (_, raw, expected) => {
    expect(issues(raw)).toEqual(expected);
  });

  it("YAML that is not YAML, or repeats a key, is refused before the schema", () => {
    const dup = parseFleetSpecText("apiVersion: npa.fleet/v0.0.1\nname: a\nname: b\n");
    expect(dup).toMatchObject({
      ok: false,
      issues: [{ path: "", message: expect.stringMatching(/^not valid YAML: Map keys must be unique/) }],
    });
    expect(parseFleetSpecText("projects: [a")).toMatchObject({
      ok: false,
      issues: [{ message: expect.stringMatching(/^not valid YAML/) }],
    });
  });

  it("an alias bomb (aliases expanding past the limit) is a spec issue, not a crash", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    }
    expect(parseFleetSpecText(levels.join("\n"))).toEqual({
      ok: false,
      issues: [{ path: "", message: expect.stringMatching(/^not valid YAML: .*alias/i) }],
    });
  });

  it("every issue is reported at once, not the first only", () => {
    expect(
      issues({ ...base, region: "Mars", defaults: { ...defaults, gpu_cuda_smoke: "yes" }, projects: [{}] }),
    ).toEqual([
      "region: a region such as eu-north1 or us-central1",
      "defaults.gpu_cuda_smoke: Invalid input: expected boolean, received string",
      "projects[0]: a project has exactly one of name (created on demand) or project_id",
    ]);
  });
});

describe("defaults deep-merged under every cluster", () => {
  const effective = (defaultsPatch: Record<string, unknown>, clusterPatch: Record<string, unknown>) => {
    const r = loadFleetSpec({
      ...base,
      defaults: { ...defaults, ...defaultsPatch },
      projects: [{ name: "a", clusters: [clusterPatch] }],
    });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    return r.fleet.projects[0]!.clusters[0]!.cluster;
  };
  const ray = { enabled: true, worker_replicas: 2, worker_cpus: 2, worker_memory_gib: 4 };

  it("a nested setting overrides one field and keeps the others", () => {
    expect(effective({}, { cpu_nodes: { count: 3 } }).cpu_nodes).toEqual({
      count: 3,
      platform: "cpu-d3",
      preset: "16vcpu-64gb",
      boot_disk_gibibytes: 128,
    });
  });
  it("null removes a default node pool", () => {
    expect(
      effective({ gpu_nodes: { count: 1, platform: "gpu-rtx6000", preset: "1gpu-24vcpu-218gb" } }, { gpu_nodes: null })
        .gpu_nodes,
    ).toBeNull();
  });
  it("a disabled block replaces the enabled default whole", () => {
    expect(effective({ kuberay: ray }, { kuberay: { enabled: false } }).kuberay).toEqual({ enabled: false });
  });
  it("a disabled block carries nothing else (no setting of the default leaks into it)", () => {
    expect(() => effective({ kuberay: ray }, { kuberay: { enabled: false, worker_replicas: 3 } })).toThrow(
      /Unrecognized key/,
    );
  });
  it("an enabled default is adjusted field by field", () => {
    expect(effective({ kuberay: ray }, { kuberay: { worker_replicas: 4 } }).kuberay).toEqual({
      ...ray,
      worker_replicas: 4,
      head_cpus: 1,
      head_memory_gib: 2,
    });
  });
  it("a block enabled in the cluster over a disabled default", () => {
    expect(effective({ kuberay: { enabled: false } }, { kuberay: ray }).kuberay).toMatchObject(ray);
  });
  it("maps of data are replaced, not merged", () => {
    const repos = { "a.sources": "A", "b.sources": "B" };
    expect(
      effective({ gpu_driver_package_repositories: repos }, { gpu_driver_package_repositories: { "c.sources": "C" } })
        .gpu_driver_package_repositories,
    ).toEqual({ "c.sources": "C" });
  });
  it("the rtx-rendering profile picks RTX PRO 6000 and its single-GPU preset", () => {
    expect(effective({}, { gpu_workload_profile: "rtx-rendering", gpu_nodes: { count: 2 } }).gpu_nodes).toMatchObject({
      count: 2,
      platform: "gpu-rtx6000",
      preset: "1gpu-24vcpu-218gb",
    });
  });
  it("deepMerge itself: scalars and lists replace, objects merge", () => {
    expect(deepMerge({ a: 1, b: { c: 1, d: [1] } }, { b: { d: [2] } })).toEqual({ a: 1, b: { c: 1, d: [2] } });
    expect(deepMerge({ a: 1 }, undefined)).toEqual({ a: 1 });
  });
  it("unnamed clusters: default when alone, cluster-<n> among several", () => {
    const r = loadFleetSpec({ ...base, defaults, projects: [{ name: "a", clusters: [{}, { name: "x" }, {}] }] });
    expect(r.ok && r.fleet.projects[0]!.clusters.map((c) => c.cluster.name)).toEqual(["cluster-1", "x", "cluster-3"]);
  });
});
