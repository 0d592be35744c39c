/**
 * The preflight verdict, fail-closed: from a plan and the provider's own JSON (evidence.ts
 * gathers it) to pass or refuse, with every shortfall listed. Evidence that is missing,
 * unreadable, malformed or partial (a page of several) is itself a shortfall, never a pass, and
 * never a silently skipped check.
 */
import type { z } from "zod";
import {
  FleetPreflightSchema,
  OUTPUT_VERSION,
  type FleetPlan,
  type FleetPreflight,
  type QuotaLine,
  type Shortfall,
} from "./output.ts";
import {
  CapacityBlockGroupListSchema,
  CapacityBlockGroupResourcesSchema,
  CapacityIntervalListSchema,
  ProviderProjectListSchema,
  ProviderProjectSchema,
  QuotaAllowanceListSchema,
  type CapacityBlockGroup,
  type CapacityInterval,
  type ProviderProject,
  type QuotaAllowance,
} from "./provider.ts";
import { quotaDemand, type DemandContext } from "./quotas.ts";

/**
 * What a `usage_state` says about `usage`: USED with the figure present, or NOT_USED (nothing is
 * used, so an absent figure is 0). Every other value (UNKNOWN: the region was unreachable;
 * NOT_APPLICABLE; UNSPECIFIED; a value newer than this tool) leaves the usage unknown, so it refuses.
 */
export function readUsage(usageState: string, usage: number | undefined): { usage: number } | { problem: string } {
  if (usageState === "USAGE_STATE_USED")
    return usage === undefined ? { problem: "its usage is USED but the provider gave no figure" } : { usage };
  if (usageState === "USAGE_STATE_NOT_USED")
    return usage ? { problem: `its usage is NOT_USED yet the provider reports ${usage} used` } : { usage: 0 };
  if (usageState === "USAGE_STATE_UNKNOWN")
    return { problem: "its usage is unknown (region unreachable): retry later" };
  return { problem: `its usage state is ${usageState}: the usage cannot be read` };
}

/** One piece of evidence as it was read: its JSON, or why it could not be. */
export type Read = { ok: true; value: unknown } | { ok: false; error: string };

export interface Evidence {
  /** `nebius quotas quota-allowance list --parent-id <tenant> --all`. */
  quotaAllowances: Read;
  /** `nebius iam project list --parent-id <tenant> --all`. */
  projects: Read;
  /** `nebius iam project get --id <id>`, per explicit project_id. */
  projectsById: Record<string, Read>;
  /** `nebius capacity capacity-block-group list --parent-id <tenant> --all`; null when no cluster names a block. */
  capacityBlockGroups: Read | null;
  /** `nebius capacity capacity-interval list --parent-id <block> --all`, per block. */
  capacityIntervals: Record<string, Read>;
  /** `nebius capacity capacity-block-group list-resources --id <block>`, per block. */
  capacityBlockGroupResources: Record<string, Read>;
}

/** What evidence a plan needs, by the same names the evidence sources and files use. */
export interface EvidenceNeeds {
  tenantId: string;
  projectIds: string[];
  capacityBlockGroups: string[];
}

export function evidenceNeeds(plan: FleetPlan): EvidenceNeeds {
  const projectIds = plan.projects.flatMap((p) => (p.projectId ? [p.projectId] : []));
  const blocks = new Set<string>();
  for (const p of plan.projects)
    for (const c of p.clusters) if (c.gpuNodes?.capacityBlockGroup) blocks.add(c.gpuNodes.capacityBlockGroup);
  return { tenantId: plan.tenantId, projectIds, capacityBlockGroups: [...blocks].sort() };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Evidence through its schema; a list that is one page of several is refused (it was not read with --all). */
function parse<S extends z.ZodType>(read: Read | undefined, schema: S, what: string): Parsed<z.output<S>> {
  if (!read) return { ok: false, message: `${what}: not gathered` };
  if (!read.ok) return { ok: false, message: `${what}: ${read.error}` };
  const r = schema.safeParse(read.value);
  if (!r.success) {
    const first = r.error.issues[0];
    return {
      ok: false,
      message: `${what}: not the provider's shape (${first?.path.join(".") || "top"}: ${first?.message})`,
    };
  }
  const token = (r.data as { next_page_token?: unknown }).next_page_token;
  if (typeof token === "string" && token !== "")
    return { ok: false, message: `${what}: only one page of several (next_page_token set); list with --all` };
  return { ok: true, value: r.data };
}

/** An existing project read back: exact ID, the tenant, the region, active, neither suspended nor deleting. */
export function verifyProject(
  p: ProviderProject,
  expect: { id?: string | undefined; tenantId: string; region: string },
): string[] {
  const problems: string[] = [];
  if (!p.metadata.id) problems.push("the provider returned no project ID");
  else if (expect.id !== undefined && p.metadata.id !== expect.id)
    problems.push(`the provider returned project ${p.metadata.id}, not ${expect.id}`);
  if (p.metadata.parent_id !== expect.tenantId)
    problems.push(`it belongs to ${p.metadata.parent_id || "no tenant"}, not tenant ${expect.tenantId}`);
  const region = p.status.region || p.spec.region;
  if (region !== expect.region) problems.push(`it is in region ${region || "(none)"}, not ${expect.region}`);
  if (p.status.container_state !== "ACTIVE") problems.push(`its state is ${p.status.container_state}, not ACTIVE`);
  // Only NONE is usable: SUSPENDING, SUSPENDED, RESUMING, an unspecified or a newer value all refuse.
  if (p.status.suspension_state !== "NONE")
    problems.push(`its suspension state is ${p.status.suspension_state}, not NONE`);
  return problems;
}

export interface BlockUse {
  subject: string;
  platform: string;
  fabric: string | null;
  gpus: number;
}

/**
 * A capacity block group may carry GPU workers only when it is active (with an active
 * interval), in the tenant and the region, on the workers' platform and fabric, and has the GPUs
 * left for all of them together.
 */
export function checkCapacityBlock(
  block: CapacityBlockGroup | undefined,
  intervals: CapacityInterval[] | undefined,
  expect: { id: string; tenantId: string; region: string; uses: BlockUse[] },
): { problems: string[]; remaining: number | null } {
  if (!block)
    return { problems: [`no capacity block group ${expect.id} in tenant ${expect.tenantId}`], remaining: null };
  const problems: string[] = [];
  const s = block.status;
  if (!s) return { problems: ["the provider returned no status for it"], remaining: null };
  if (block.metadata.parent_id !== expect.tenantId)
    problems.push(`it belongs to ${block.metadata.parent_id || "no tenant"}, not tenant ${expect.tenantId}`);
  if (s.state !== "STATE_ACTIVE") problems.push(`its state is ${s.state}, not STATE_ACTIVE`);
  if (s.reconciling) problems.push("it is reconciling: its limit and usage are not settled, retry later");
  if (s.service !== "compute") problems.push(`it reserves for service ${s.service || "(none)"}, not compute`);
  if (intervals) {
    for (const i of intervals) {
      const at = `capacity interval ${i.metadata.id || "(no id)"}`;
      if (i.metadata.parent_id !== expect.id)
        problems.push(`${at} belongs to ${i.metadata.parent_id || "no block"}, not ${expect.id}`);
      if (i.status.container_id !== expect.tenantId)
        problems.push(`${at} is for ${i.status.container_id || "no container"}, not tenant ${expect.tenantId}`);
      if (i.status.region !== expect.region)
        problems.push(`${at} is in region ${i.status.region || "(none)"}, not ${expect.region}`);
      if (i.status.service !== "compute")
        problems.push(`${at} reserves for service ${i.status.service || "(none)"}, not compute`);
      if (i.status.reconciling) problems.push(`${at} is reconciling: retry later`);
    }
    if (!intervals.some((i) => i.status.state === "STATE_ACTIVE"))
      problems.push("none of its capacity intervals is active now");
  }
  if (s.region !== expect.region) problems.push(`it is in region ${s.region || "(none)"}, not ${expect.region}`);
  const affinity = s.resource_affinity.compute_v1;
  if (!affinity) problems.push("it reserves no compute capacity (no compute_v1 affinity)");
  for (const u of expect.uses) {
    if (affinity && affinity.platform !== u.platform)
      problems.push(`${u.subject} runs ${u.platform}; the block reserves ${affinity.platform || "no platform"}`);
    // A block on a fabric places its instances in that GPU cluster's fabric; workers with no GPU
    // cluster (fabric null) or another fabric cannot use it, and a fabric-less block cannot serve a fabric.
    if (affinity && (affinity.fabric || null) !== u.fabric)
      problems.push(
        `${u.subject} is on fabric ${u.fabric ?? "(none: no GPU cluster)"}; the block's is ${affinity.fabric || "(none)"}`,
      );
  }
  const usage = readUsage(s.usage_state, s.usage);
  if ("problem" in usage) {
    problems.push(usage.problem);
    return { problems, remaining: null };
  }
  // current_limit and usage are read as GPUs, an assumption the docs state (docs/fleet-spec.md, capacity block groups).
  const remaining = Math.max(0, s.current_limit - usage.usage);
  const required = expect.uses.reduce((n, u) => n + u.gpus, 0);
  if (required > remaining)
    problems.push(`needs ${required} GPUs, ${remaining} remain (limit ${s.current_limit}, used ${usage.usage})`);
  return { problems, remaining };
}

/** One quota against the tenant's allowance in the region: limit − usage must cover the requirement. */
export function checkQuota(
  name: string,
  required: number,
  allowance: QuotaAllowance | undefined,
  unit: string = providerUnit(name),
): { limit: number | null; usage: number | null; available: number | null; problem: string | null } {
  if (!allowance) return { limit: null, usage: null, available: null, problem: "the tenant lists no allowance for it" };
  const s = allowance.status;
  const limit = allowance.spec.limit ?? null;
  const seen = s.usage ?? null;
  if (limit === null) return { limit, usage: seen, available: null, problem: "its limit is not set at the tenant" };
  if (s.state !== "STATE_ACTIVE") return { limit, usage: seen, available: null, problem: `its state is ${s.state}` };
  if (s.unit !== unit)
    return { limit, usage: seen, available: null, problem: `it is counted in ${s.unit || "(no unit)"}, not ${unit}` };
  const usage = readUsage(s.usage_state, s.usage);
  if ("problem" in usage) return { limit, usage: null, available: null, problem: usage.problem };
  const available = Math.max(0, limit - usage.usage);
  return {
    limit,
    usage: usage.usage,
    available,
    problem:
      required > available ? `needs ${required}, ${available} available (limit ${limit}, used ${usage.usage})` : null,
  };
}

/** The unit the provider reports a quota in: bytes for sizes, a count for everything else (vCPUs and GPUs too). */
export function providerUnit(quotaName: string): string {
  return /\.size\./.test(quotaName) ? "byte" : "count";
}

type Short = (kind: Shortfall["kind"], subject: string, message: string) => void;
type Expect = { tenantId: string; region: string };

/** Named projects resolved through one listing (an existing name is reused, never re-created); IDs read back. */
function checkProjects(plan: FleetPlan, evidence: Evidence, expect: Expect, short: Short) {
  const projectList = parse(evidence.projects, ProviderProjectListSchema, "project list");
  if (!projectList.ok) short("evidence", "projects", projectList.message);
  const newProjects = new Set<string>();
  const projects: FleetPreflight["projects"] = plan.projects.map((p) => {
    if (p.projectId) {
      const read = parse(evidence.projectsById[p.projectId], ProviderProjectSchema, `project ${p.projectId}`);
      if (!read.ok) {
        short("evidence", `project-${p.projectId}`, read.message);
        return { key: p.key, action: "existing", projectId: p.projectId, verified: false };
      }
      const problems = verifyProject(read.value, { ...expect, id: p.projectId });
      for (const m of problems) short("project", p.key, `project ${p.projectId}: ${m}`);
      return { key: p.key, action: "existing", projectId: p.projectId, verified: problems.length === 0 };
    }
    // Unknown project inventory: charged as new, so the quota lines stay complete, and unverified.
    if (!projectList.ok) {
      newProjects.add(p.key);
      return { key: p.key, action: "create", projectId: null, verified: false };
    }
    const named = projectList.value.items.filter((x) => x.metadata.name === p.projectName);
    if (named.length > 1) {
      short("project", p.key, `${named.length} projects are named ${p.projectName}: refusing to pick one`);
      return { key: p.key, action: "existing", projectId: null, verified: false };
    }
    const found = named[0];
    if (!found) {
      newProjects.add(p.key);
      return { key: p.key, action: "create", projectId: null, verified: true };
    }
    const problems = verifyProject(found, expect);
    for (const m of problems) short("project", p.key, `project ${p.projectName} (${found.metadata.id}): ${m}`);
    return { key: p.key, action: "existing", projectId: found.metadata.id || null, verified: problems.length === 0 };
  });
  return { projects, newProjects };
}

/** Every block the plan binds GPU pools to, validated before any of its GPUs leave the on-demand GPU quota. */
function checkCapacityBlocks(plan: FleetPlan, evidence: Evidence, expect: Expect, short: Short) {
  const uses = new Map<string, BlockUse[]>();
  for (const p of plan.projects)
    for (const c of p.clusters) {
      const g = c.gpuNodes;
      if (!g?.capacityBlockGroup) continue;
      const use = {
        subject: `${p.key}/${c.name}`,
        platform: g.platform,
        fabric: c.enableGpuCluster ? c.infinibandFabric : null,
        gpus: g.count * g.gpusPerNode,
      };
      uses.set(g.capacityBlockGroup, [...(uses.get(g.capacityBlockGroup) ?? []), use]);
    }
  const validatedBlocks = new Set<string>();
  const capacityBlocks: FleetPreflight["capacityBlocks"] = [];
  if (!uses.size) return { capacityBlocks, validatedBlocks };
  const groups = parse(
    evidence.capacityBlockGroups ?? undefined,
    CapacityBlockGroupListSchema,
    "capacity block group list",
  );
  if (!groups.ok) short("evidence", "capacity-block-groups", groups.message);
  for (const [id, blockUses] of [...uses].sort(([a], [b]) => a.localeCompare(b))) {
    const intervals = parse(evidence.capacityIntervals[id], CapacityIntervalListSchema, `capacity intervals of ${id}`);
    const resources = parse(
      evidence.capacityBlockGroupResources[id],
      CapacityBlockGroupResourcesSchema,
      `resources of ${id}`,
    );
    if (!intervals.ok) short("evidence", `capacity-intervals-${id}`, intervals.message);
    if (!resources.ok) short("evidence", `capacity-block-group-resources-${id}`, resources.message);
    const matches = groups.ok ? groups.value.items.filter((b) => b.metadata.id === id) : [];
    if (matches.length > 1)
      short("evidence", "capacity-block-groups", `capacity block group list: ${id} is listed ${matches.length} times`);
    const block = matches.length === 1 ? matches[0] : undefined;
    const checked =
      groups.ok && matches.length <= 1
        ? checkCapacityBlock(block, intervals.ok ? intervals.value.items : undefined, {
            id,
            ...expect,
            uses: blockUses,
          })
        : { problems: [], remaining: null };
    for (const m of checked.problems) short("capacity_block", id, m);
    const ok = groups.ok && matches.length === 1 && intervals.ok && resources.ok && checked.problems.length === 0;
    if (ok) validatedBlocks.add(id);
    const affinity = block?.status?.resource_affinity.compute_v1;
    capacityBlocks.push({
      id,
      requiredGpus: blockUses.reduce((n, u) => n + u.gpus, 0),
      remainingGpus: checked.remaining,
      platform: affinity?.platform || null,
      fabric: affinity?.fabric || null,
      instances: resources.ok ? resources.value.resource_ids.length : null,
      ok,
    });
  }
  return { capacityBlocks, validatedBlocks };
}

/** Each quota the plan needs against the tenant's allowance of that name in the plan's region. */
function checkQuotas(plan: FleetPlan, evidence: Evidence, ctx: DemandContext, short: Short): QuotaLine[] {
  const parsed = parse(evidence.quotaAllowances, QuotaAllowanceListSchema, "quota allowance list");
  // The list is the tenant's (`--parent-id <tenant>`): an allowance of any other parent means the
  // file or the call was not that, so none of it is trusted.
  const foreign = parsed.ok ? parsed.value.items.filter((a) => a.metadata.parent_id !== plan.tenantId) : [];
  const allowances: Parsed<z.output<typeof QuotaAllowanceListSchema>> =
    parsed.ok && foreign.length
      ? {
          ok: false,
          message: `quota allowance list: ${foreign.length} of its allowances belong to ${[
            ...new Set(foreign.map((a) => a.metadata.parent_id || "no parent")),
          ]
            .sort()
            .join(", ")}, not tenant ${plan.tenantId}`,
        }
      : parsed;
  if (!allowances.ok) short("evidence", "quota-allowances", allowances.message);
  const index = new Map<string, QuotaAllowance[]>();
  if (allowances.ok)
    for (const a of allowances.value.items)
      if (a.spec.region === plan.region) index.set(a.metadata.name, [...(index.get(a.metadata.name) ?? []), a]);
  return quotaDemand(plan, ctx).map((d) => {
    const line = { name: d.name, region: plan.region, required: d.required, unit: d.unit, from: d.from };
    if (!allowances.ok) return { ...line, limit: null, usage: null, available: null, ok: false };
    const found = index.get(d.name) ?? [];
    if (found.length > 1) {
      short("quota", d.name, `${found.length} allowances named ${d.name} in ${plan.region}: refusing to pick one`);
      return { ...line, limit: null, usage: null, available: null, ok: false };
    }
    const q = checkQuota(d.name, d.required, found[0], providerUnit(d.name));
    if (q.problem) short("quota", d.name, `${d.name} [${plan.region}]: ${q.problem}`);
    return { ...line, limit: q.limit, usage: q.usage, available: q.available, ok: q.problem === null };
  });
}

export function evaluatePreflight(plan: FleetPlan, evidence: Evidence): FleetPreflight {
  const shortfalls: Shortfall[] = [];
  const short: Short = (kind, subject, message) => void shortfalls.push({ kind, subject, message });
  const expect = { tenantId: plan.tenantId, region: plan.region };
  const { projects, newProjects } = checkProjects(plan, evidence, expect, short);
  const { capacityBlocks, validatedBlocks } = checkCapacityBlocks(plan, evidence, expect, short);
  const quotas = checkQuotas(plan, evidence, { newProjects, validatedBlocks }, short);
  return FleetPreflightSchema.parse({
    kind: "FleetPreflight",
    version: OUTPUT_VERSION,
    fleet: plan.fleet,
    tenantId: plan.tenantId,
    region: plan.region,
    verdict: shortfalls.length ? "refuse" : "pass",
    projects,
    capacityBlocks,
    quotas,
    shortfalls,
  });
}
