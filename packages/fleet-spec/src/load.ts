/**
 * From a spec's text to its effective clusters: YAML (duplicate keys refused), the strict
 * schema, then `defaults` merged under every cluster and each merged cluster checked again. Every
 * issue is collected and named by its path; nothing is half-accepted.
 */
import { parseDocument } from "yaml";
import { deepMerge, isPlain } from "./merge.ts";
import { RTX_SINGLE_GPU_PRESET } from "./presets.ts";
import {
  EffectiveClusterSchema,
  FleetSpecSchema,
  zodIssues,
  type EffectiveCluster,
  type FleetSpec,
  type ProjectEntry,
  type SpecIssue,
} from "./spec.ts";

export interface LoadedCluster {
  cluster: EffectiveCluster;
  /** Where it was declared: `projects[2].clusters[1]`, or `projects[0]` for an implicit one. */
  path: string;
}

export interface LoadedProject {
  /** The selector key (`--only-projects`): its name, or its project_id. */
  key: string;
  entry: ProjectEntry;
  path: string;
  clusters: LoadedCluster[];
}

export interface LoadedFleet {
  spec: FleetSpec;
  projects: LoadedProject[];
}

export type Loaded = { ok: true; fleet: LoadedFleet } | { ok: false; issues: SpecIssue[] };

/** The name of an unnamed cluster: `default` when it is the project's only one, else `cluster-<n>`. */
const implicitName = (index: number, total: number) => (total === 1 ? "default" : `cluster-${index + 1}`);

/**
 * The RTX rendering profile selects RTX PRO 6000 and its single-GPU preset unless the cluster
 * names them (an 8-GPU RTX preset or a zonal platform is accepted, and checked in resolve.ts).
 */
function withProfileDefaults(merged: unknown): unknown {
  if (!isPlain(merged) || merged.gpu_workload_profile !== "rtx-rendering" || !isPlain(merged.gpu_nodes)) return merged;
  return { ...merged, gpu_nodes: { platform: "gpu-rtx6000", preset: RTX_SINGLE_GPU_PRESET, ...merged.gpu_nodes } };
}

export function parseFleetSpecText(text: string): Loaded {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length)
    return { ok: false, issues: doc.errors.map((e) => ({ path: "", message: `not valid YAML: ${e.message}` })) };
  let raw: unknown;
  try {
    // The yaml library throws here, not into doc.errors, on an alias expansion past the limit (a
    // "billion laughs" document): that is the file's fault, so a spec issue like any other.
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, issues: [{ path: "", message: `not valid YAML: ${(err as Error).message}` }] };
  }
  return loadFleetSpec(raw);
}

export function loadFleetSpec(raw: unknown): Loaded {
  const parsed = FleetSpecSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: zodIssues(parsed.error) };
  const spec = parsed.data;
  const issues: SpecIssue[] = [];
  const projects: LoadedProject[] = [];
  const keys = new Map<string, string>();
  spec.projects.forEach((entry, p) => {
    const path = `projects[${p}]`;
    const key = (entry.name ?? entry.project_id) as string;
    const seen = keys.get(key);
    if (seen) issues.push({ path, message: `project ${key} is declared twice (also at ${seen})` });
    keys.set(key, path);
    const patches = entry.clusters ?? [{}];
    const clusters: LoadedCluster[] = [];
    const names = new Map<string, string>();
    patches.forEach((patch, c) => {
      const cpath = entry.clusters ? `${path}.clusters[${c}]` : path;
      const merged = withProfileDefaults(
        deepMerge(spec.defaults, { ...patch, name: patch.name ?? implicitName(c, patches.length) }),
      );
      const effective = EffectiveClusterSchema.safeParse(merged);
      if (!effective.success) {
        for (const i of zodIssues(effective.error))
          issues.push({
            path: `${cpath}${i.path ? `.${i.path}` : ""}`,
            message: `${i.message} (after merging defaults)`,
          });
        return;
      }
      const other = names.get(effective.data.name);
      if (other)
        issues.push({ path: cpath, message: `cluster ${effective.data.name} is declared twice (also at ${other})` });
      names.set(effective.data.name, cpath);
      clusters.push({ cluster: effective.data, path: cpath });
    });
    projects.push({ key, entry, path, clusters });
  });
  return issues.length ? { ok: false, issues } : { ok: true, fleet: { spec, projects } };
}
