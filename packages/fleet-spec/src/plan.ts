/**
 * The plan (no cloud access): which projects are created and which exist, and every selected
 * cluster as it would be deployed, with the selectors applied. Unknown selectors fail closed: a
 * typo in `--only-clusters` must not quietly plan nothing, or everything.
 */
import type { Identity } from "./identity.ts";
import type { LoadedFleet } from "./load.ts";
import { FleetPlanSchema, OUTPUT_VERSION, type FleetPlan, type PlannedProject } from "./output.ts";
import { resolveCluster } from "./resolve.ts";
import { API_VERSION, type SpecIssue } from "./spec.ts";

export interface PlanOptions {
  /** Project keys (names, or project_ids) to keep. */
  onlyProjects?: string[] | undefined;
  /** Cluster names to keep, in whichever selected project they are. */
  onlyClusters?: string[] | undefined;
  /** Overrides the spec's project_prefix. */
  projectPrefix?: string | undefined;
}

export type PlanResult =
  | { ok: true; plan: FleetPlan }
  /** selector: the options name what the spec does not have; spec: the spec breaks a rule. */
  | { ok: false; kind: "selector" | "spec"; issues: SpecIssue[] };

const PREFIX = /^[a-z0-9-]{0,40}$/;

export function buildPlan(fleet: LoadedFleet, identity: Identity, options: PlanOptions = {}): PlanResult {
  const { spec } = fleet;
  const prefix = options.projectPrefix ?? spec.project_prefix;
  if (!PREFIX.test(prefix))
    return {
      ok: false,
      kind: "selector",
      issues: [{ path: "--project-prefix", message: "a-z, 0-9 and '-', at most 40" }],
    };
  const selectorIssues: SpecIssue[] = [];
  const keys = new Set(fleet.projects.map((p) => p.key));
  for (const k of options.onlyProjects ?? [])
    if (!keys.has(k)) selectorIssues.push({ path: "--only-projects", message: `no project ${k} in the spec` });
  const projects = fleet.projects.filter((p) => !options.onlyProjects || options.onlyProjects.includes(p.key));
  const clusterNames = new Set(projects.flatMap((p) => p.clusters.map((c) => c.cluster.name)));
  for (const c of options.onlyClusters ?? [])
    if (!clusterNames.has(c))
      selectorIssues.push({ path: "--only-clusters", message: `no cluster ${c} in the selected projects` });
  if (selectorIssues.length) return { ok: false, kind: "selector", issues: selectorIssues };

  const issues: SpecIssue[] = [];
  const planned: PlannedProject[] = [];
  for (const p of projects) {
    const selected = p.clusters.filter((c) => !options.onlyClusters || options.onlyClusters.includes(c.cluster.name));
    if (!selected.length) continue;
    const clusters = [];
    for (const c of selected) {
      const r = resolveCluster(c.cluster);
      if (r.ok) clusters.push(r.cluster);
      else for (const i of r.issues) issues.push({ path: i.path ? `${c.path}.${i.path}` : c.path, message: i.message });
    }
    const storage = p.entry.object_storage?.enabled ? p.entry.object_storage : null;
    if (storage && !selected.some((c) => c.cluster.backend === "mk8s"))
      issues.push({
        path: `${p.path}.object_storage`,
        message: "storage is reconciled through an mk8s target: select at least one mk8s cluster of this project",
      });
    const projectName = p.entry.name !== undefined ? `${prefix}${p.entry.name}` : null;
    if (projectName !== null && projectName.length > 63)
      issues.push({ path: `${p.path}.name`, message: `the project name ${projectName} is longer than 63` });
    planned.push({
      key: p.key,
      action: p.entry.project_id ? "existing" : "create",
      projectName,
      projectId: p.entry.project_id ?? null,
      objectStorage: storage && {
        storageClass: storage.storage_class,
        sizeGibibytes: storage.size_gibibytes,
        bucketName: storage.bucket_name || null,
      },
      clusters,
    });
  }
  if (issues.length) return { ok: false, kind: "spec", issues };
  return {
    ok: true,
    plan: FleetPlanSchema.parse({
      kind: "FleetPlan",
      version: OUTPUT_VERSION,
      apiVersion: API_VERSION,
      fleet: spec.name,
      tenantId: identity.tenantId,
      tenantFrom: identity.tenantFrom,
      profile: identity.profile,
      region: spec.region,
      projectPrefix: prefix,
      selection: { projects: options.onlyProjects ?? null, clusters: options.onlyClusters ?? null },
      projects: planned,
    }),
  };
}
