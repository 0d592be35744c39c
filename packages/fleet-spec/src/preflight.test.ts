import { describe, expect, it } from "vitest";
import { directoryEvidence, gatherEvidence } from "./evidence.ts";
import { parseFleetSpecText } from "./load.ts";
import type { FleetPlan } from "./output.ts";
import { buildPlan } from "./plan.ts";
import { evaluatePreflight, evidenceNeeds, type Evidence } from "./preflight.ts";
import { FIXTURES, fixtureText } from "./testing.ts";

/** Provider JSON a case edits: any field, so loosely typed on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;

const FLEET1 = { spec: "fleet1-test.yaml", dir: "fleet1-test", tenantId: "tenant-e00fleet1test00" };
const MIXED = { spec: "fleet-mixed.yaml", dir: "fleet-mixed", tenantId: "tenant-e00mixedfleet" };
const BLOCK = "capacityblockgroup-e00train0001";

function plan(f: typeof FLEET1, onlyClusters?: string[]): FleetPlan {
  const l = parseFleetSpecText(fixtureText(f.spec));
  if (!l.ok) throw new Error(JSON.stringify(l.issues));
  const p = buildPlan(l.fleet, { tenantId: f.tenantId, profile: "", tenantFrom: "spec" }, { onlyClusters });
  if (!p.ok) throw new Error(JSON.stringify(p.issues));
  return p.plan;
}
const evidence = (f: typeof FLEET1, p: FleetPlan) =>
  gatherEvidence(evidenceNeeds(p), directoryEvidence(`${FIXTURES}evidence/${f.dir}`));

/** A deep copy of a read's JSON with `edit` applied. */
function edited(
  e: Evidence,
  key: "quotaAllowances" | "projects" | "capacityBlockGroups",
  edit: (v: Doc) => void,
): Evidence {
  const read = e[key];
  if (!read?.ok) throw new Error(`${key} was not read`);
  const value = structuredClone(read.value) as Doc;
  edit(value);
  return { ...e, [key]: { ok: true, value } };
}
const allowance = (v: Doc, name: string) =>
  v.items.find((i: Doc) => i.metadata.name === name && i.spec.region === "us-central1");
const messages = (r: ReturnType<typeof evaluatePreflight>) =>
  r.shortfalls.map((s) => `${s.kind} ${s.subject}: ${s.message}`);

describe("the seed's example against sample evidence", () => {
  it("passes: project a is created, b exists and is reused, every quota fits", async () => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, await evidence(FLEET1, p));
    expect(r.verdict).toBe("pass");
    expect(r.shortfalls).toEqual([]);
    expect(r.projects).toEqual([
      { key: "a", action: "create", projectId: null, verified: true },
      { key: "b", action: "existing", projectId: "project-e00fleet1testb01", verified: true },
    ]);
    // Only the created project's network is charged; the eu-north1 allowances are not read.
    expect(r.quotas.find((q) => q.name === "vpc.pool.count")).toEqual({
      name: "vpc.pool.count",
      region: "us-central1",
      required: 2,
      unit: "count",
      limit: 32,
      usage: 4,
      available: 28,
      ok: true,
      from: [{ subject: "project a", amount: 2 }],
    });
    expect(r.quotas.find((q) => q.name === "storage.bucket.size.enhanced-throughput")).toMatchObject({
      usage: 0,
      available: 10240 * 1024 ** 3,
    });
  });

  it("the mixed fleet passes with its H200 on the validated capacity block, outside the zero H200 quota", async () => {
    const p = plan(MIXED);
    const r = evaluatePreflight(p, await evidence(MIXED, p));
    expect(messages(r)).toEqual([]);
    expect(r.capacityBlocks).toEqual([
      {
        id: BLOCK,
        requiredGpus: 16,
        remainingGpus: 24,
        platform: "gpu-h200-sxm",
        fabric: "us-central1-a",
        instances: 5,
        ok: true,
      },
    ]);
    expect(r.quotas.map((q) => q.name)).not.toContain("compute.instance.gpu.h200");
    expect(r.projects[1]).toEqual({
      key: "project-e00existing123",
      action: "existing",
      projectId: "project-e00existing123",
      verified: true,
    });
  });
});

describe("quotas", () => {
  it.each<[string, (v: Doc) => void, string[]]>([
    [
      "a limit too low",
      (v) => (allowance(v, "compute.instance.count").spec.limit = "12"),
      ["quota compute.instance.count: compute.instance.count [us-central1]: needs 4, 2 available (limit 12, used 10)"],
    ],
    [
      "a limit of zero (NOT_USED, usage absent as protobuf JSON leaves a zero out)",
      (v) => {
        const a = allowance(v, "compute.instance.gpu.rtx6000");
        a.spec.limit = "0";
        a.status.usage_state = "USAGE_STATE_NOT_USED";
        delete a.status.usage;
      },
      [
        "quota compute.instance.gpu.rtx6000: compute.instance.gpu.rtx6000 [us-central1]: needs 2, 0 available (limit 0, used 0)",
      ],
    ],
    [
      "no allowance listed for a needed quota",
      (v) => (v.items = v.items.filter((i: Doc) => i.metadata.name !== "vpc.allocation.count")),
      ["quota vpc.allocation.count: vpc.allocation.count [us-central1]: the tenant lists no allowance for it"],
    ],
    [
      "only the other region lists it",
      (v) => (allowance(v, "compute.instance.non-gpu.vcpu").spec.region = "eu-west1"),
      [
        "quota compute.instance.non-gpu.vcpu: compute.instance.non-gpu.vcpu [us-central1]: the tenant lists no allowance for it",
      ],
    ],
    [
      "the limit is not set",
      (v) => delete allowance(v, "compute.disk.count").spec.limit,
      ["quota compute.disk.count: compute.disk.count [us-central1]: its limit is not set at the tenant"],
    ],
    [
      "the allowance is frozen",
      (v) => (allowance(v, "compute.disk.count").status.state = "STATE_FROZEN"),
      ["quota compute.disk.count: compute.disk.count [us-central1]: its state is STATE_FROZEN"],
    ],
    [
      "its usage is unknown",
      (v) => (allowance(v, "vpc.subnet.count").status.usage_state = "USAGE_STATE_UNKNOWN"),
      [
        "quota vpc.subnet.count: vpc.subnet.count [us-central1]: its usage is unknown (region unreachable): retry later",
      ],
    ],
    [
      "bytes: the bucket's cap above the Enhanced allowance",
      (v) => {
        const a = allowance(v, "storage.bucket.size.enhanced-throughput");
        a.status.usage_state = "USAGE_STATE_USED";
        a.status.usage = String(10000 * 1024 ** 3);
      },
      [
        "quota storage.bucket.size.enhanced-throughput: storage.bucket.size.enhanced-throughput [us-central1]: needs 1099511627776, 257698037760 available (limit 10995116277760, used 10737418240000)",
      ],
    ],
    [
      "its usage state is unspecified (absent)",
      (v) => delete allowance(v, "vpc.subnet.count").status.usage_state,
      [
        "quota vpc.subnet.count: vpc.subnet.count [us-central1]: its usage state is USAGE_STATE_UNSPECIFIED: the usage cannot be read",
      ],
    ],
    [
      "its usage state is NOT_APPLICABLE",
      (v) => (allowance(v, "vpc.subnet.count").status.usage_state = "USAGE_STATE_NOT_APPLICABLE"),
      [
        "quota vpc.subnet.count: vpc.subnet.count [us-central1]: its usage state is USAGE_STATE_NOT_APPLICABLE: the usage cannot be read",
      ],
    ],
    [
      "USED with no usage figure (absent is not read as 0)",
      (v) => delete allowance(v, "vpc.subnet.count").status.usage,
      ["quota vpc.subnet.count: vpc.subnet.count [us-central1]: its usage is USED but the provider gave no figure"],
    ],
    [
      "NOT_USED yet a usage figure",
      (v) => (allowance(v, "storage.bucket.size.enhanced-throughput").status.usage = "1"),
      [
        "quota storage.bucket.size.enhanced-throughput: storage.bucket.size.enhanced-throughput [us-central1]: its usage is NOT_USED yet the provider reports 1 used",
      ],
    ],
    [
      "a size quota not counted in bytes",
      (v) => (allowance(v, "compute.disk.size.network-ssd").status.unit = "gibibyte"),
      [
        "quota compute.disk.size.network-ssd: compute.disk.size.network-ssd [us-central1]: it is counted in gibibyte, not byte",
      ],
    ],
    [
      "a count quota in bytes",
      (v) => (allowance(v, "compute.instance.count").status.unit = "byte"),
      ["quota compute.instance.count: compute.instance.count [us-central1]: it is counted in byte, not count"],
    ],
    [
      "a quota without a unit",
      (v) => delete allowance(v, "vpc.route.count").status.unit,
      ["quota vpc.route.count: vpc.route.count [us-central1]: it is counted in (no unit), not count"],
    ],
    [
      "two allowances of one name",
      (v) => v.items.push(structuredClone(allowance(v, "vpc.route.count"))),
      ["quota vpc.route.count: 2 allowances named vpc.route.count in us-central1: refusing to pick one"],
    ],
  ])("refused: %s", async (_, edit, expected) => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, edited(await evidence(FLEET1, p), "quotaAllowances", edit));
    expect(r.verdict).toBe("refuse");
    expect(messages(r)).toEqual(expected);
  });

  it.each<[string, (v: Doc) => void, string]>([
    [
      "one allowance of another tenant",
      (v) => (allowance(v, "compute.instance.count").metadata.parent_id = "tenant-e00other0001"),
      "1 of its allowances belong to tenant-e00other0001",
    ],
    [
      "an allowance with no parent",
      (v) => delete allowance(v, "vpc.route.count").metadata.parent_id,
      "1 of its allowances belong to no parent",
    ],
    [
      "the whole list of another tenant",
      (v) => v.items.forEach((i: Doc) => (i.metadata.parent_id = "tenant-e00other0001")),
      "23 of its allowances belong to tenant-e00other0001",
    ],
  ])(
    "an allowance list with %s is not the tenant's: evidence shortfall, every line unverified",
    async (_, edit, why) => {
      const p = plan(FLEET1);
      const r = evaluatePreflight(p, edited(await evidence(FLEET1, p), "quotaAllowances", edit));
      expect(messages(r)).toEqual([
        `evidence quota-allowances: quota allowance list: ${why}, not tenant tenant-e00fleet1test00`,
      ]);
      expect(r.verdict).toBe("refuse");
      expect(r.quotas.every((q) => !q.ok && q.limit === null)).toBe(true);
    },
  );

  it("every shortfall is listed, not the first", async () => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(
      p,
      edited(await evidence(FLEET1, p), "quotaAllowances", (v) => {
        for (const name of ["compute.instance.count", "compute.disk.count", "vpc.allocation.count"])
          allowance(v, name).spec.limit = "1";
      }),
    );
    expect(r.shortfalls.map((s) => s.subject)).toEqual([
      "compute.disk.count",
      "compute.instance.count",
      "vpc.allocation.count",
    ]);
    expect(r.quotas.filter((q) => !q.ok).map((q) => q.name)).toEqual([
      "compute.disk.count",
      "compute.instance.count",
      "vpc.allocation.count",
    ]);
  });
});

describe("projects", () => {
  const projectB = (v: Doc) => v.items.find((i: Doc) => i.metadata.name === "fleet1-test-b");
  it.each<[string, (v: Doc) => void, string[]]>([
    [
      "in another tenant",
      (v) => (projectB(v).metadata.parent_id = "tenant-e00other0001"),
      [
        "project b: project fleet1-test-b (project-e00fleet1testb01): it belongs to tenant-e00other0001, not tenant tenant-e00fleet1test00",
      ],
    ],
    [
      "in another region",
      (v) => (projectB(v).status.region = "eu-north1"),
      ["project b: project fleet1-test-b (project-e00fleet1testb01): it is in region eu-north1, not us-central1"],
    ],
    [
      "being deleted",
      (v) => (projectB(v).status.container_state = "SCHEDULED_FOR_DELETION"),
      ["project b: project fleet1-test-b (project-e00fleet1testb01): its state is SCHEDULED_FOR_DELETION, not ACTIVE"],
    ],
    [
      "suspended",
      (v) => (projectB(v).status.suspension_state = "SUSPENDED"),
      ["project b: project fleet1-test-b (project-e00fleet1testb01): its suspension state is SUSPENDED, not NONE"],
    ],
    [
      "its suspension state is unspecified",
      (v) => delete projectB(v).status.suspension_state,
      [
        "project b: project fleet1-test-b (project-e00fleet1testb01): its suspension state is SUSPENSION_STATE_UNSPECIFIED, not NONE",
      ],
    ],
    [
      "its suspension state is one this tool does not know",
      (v) => (projectB(v).status.suspension_state = "SUSPENSION_STATE_NEW_KIND"),
      [
        "project b: project fleet1-test-b (project-e00fleet1testb01): its suspension state is SUSPENSION_STATE_NEW_KIND, not NONE",
      ],
    ],
    [
      "no state at all (unspecified)",
      (v) => delete projectB(v).status,
      [
        "project b: project fleet1-test-b (project-e00fleet1testb01): its state is STATE_UNSPECIFIED, not ACTIVE",
        "project b: project fleet1-test-b (project-e00fleet1testb01): its suspension state is SUSPENSION_STATE_UNSPECIFIED, not NONE",
      ],
    ],
    [
      "two projects of that name",
      (v) =>
        v.items.push({
          ...structuredClone(projectB(v)),
          metadata: { ...projectB(v).metadata, id: "project-e00dupe0001" },
        }),
      ["project b: 2 projects are named fleet1-test-b: refusing to pick one"],
    ],
  ])("an existing named project is refused when %s", async (_, edit, expected) => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, edited(await evidence(FLEET1, p), "projects", edit));
    expect(messages(r)).toEqual(expected);
    expect(r.projects[1]?.verified).toBe(false);
  });

  const EXISTING = "project-e00existing123";
  it.each<[string, (v: Doc) => void, string]>([
    [
      "in another tenant",
      (v) => (v.metadata.parent_id = "tenant-e00other0001"),
      "it belongs to tenant-e00other0001, not tenant tenant-e00mixedfleet",
    ],
    ["in another region", (v) => (v.status.region = "eu-north1"), "it is in region eu-north1, not us-central1"],
    ["suspended", (v) => (v.status.suspension_state = "SUSPENDED"), "its suspension state is SUSPENDED, not NONE"],
    [
      "being deleted",
      (v) => (v.status.container_state = "SCHEDULED_FOR_DELETION"),
      "its state is SCHEDULED_FOR_DELETION, not ACTIVE",
    ],
  ])("an explicit project_id is refused when %s", async (_, edit, message) => {
    const p = plan(MIXED);
    const e = await evidence(MIXED, p);
    const read = e.projectsById[EXISTING];
    if (!read?.ok) throw new Error("not read");
    const value = structuredClone(read.value) as Doc;
    edit(value);
    const r = evaluatePreflight(p, { ...e, projectsById: { [EXISTING]: { ok: true, value } } });
    expect(messages(r)).toEqual([`project ${EXISTING}: project ${EXISTING}: ${message}`]);
    expect(r.projects[1]).toMatchObject({ projectId: EXISTING, verified: false });
  });

  it("an explicit project_id whose file is missing refuses, unverified", async () => {
    const p = plan(MIXED);
    const e = await gatherEvidence(evidenceNeeds(p), directoryEvidence(`${FIXTURES}evidence/fleet1-test`));
    const r = evaluatePreflight(p, { ...(await evidence(MIXED, p)), projectsById: e.projectsById });
    expect(messages(r)).toEqual([
      `evidence project-${EXISTING}: project ${EXISTING}: project-${EXISTING}.json is missing from ${FIXTURES}evidence/fleet1-test`,
    ]);
    expect(r.projects[1]).toMatchObject({ projectId: EXISTING, verified: false });
  });

  it("an explicit project_id is read back by ID and verified", async () => {
    const p = plan(MIXED);
    const e = await evidence(MIXED, p);
    const read = e.projectsById["project-e00existing123"];
    if (!read?.ok) throw new Error("not read");
    const other = structuredClone(read.value) as Doc;
    other.metadata.id = "project-e00somethingelse";
    const r = evaluatePreflight(p, { ...e, projectsById: { "project-e00existing123": { ok: true, value: other } } });
    expect(messages(r)).toEqual([
      "project project-e00existing123: project project-e00existing123: the provider returned project project-e00somethingelse, not project-e00existing123",
    ]);
  });
});

describe("capacity blocks", () => {
  const block = (v: Doc) => v.items[0];
  it.each<[string, (v: Doc) => void, string[]]>([
    [
      "not in the tenant's list",
      (v) => (v.items = []),
      [`capacity_block ${BLOCK}: no capacity block group ${BLOCK} in tenant tenant-e00mixedfleet`],
    ],
    [
      "another tenant's",
      (v) => (block(v).metadata.parent_id = "tenant-e00other0001"),
      [`capacity_block ${BLOCK}: it belongs to tenant-e00other0001, not tenant tenant-e00mixedfleet`],
    ],
    [
      "inactive",
      (v) => (block(v).status.state = "STATE_INACTIVE"),
      [`capacity_block ${BLOCK}: its state is STATE_INACTIVE, not STATE_ACTIVE`],
    ],
    [
      "in another region",
      (v) => (block(v).status.region = "eu-north1"),
      [`capacity_block ${BLOCK}: it is in region eu-north1, not us-central1`],
    ],
    [
      "for another platform",
      (v) => (block(v).status.resource_affinity.compute_v1.platform = "gpu-b200-sxm"),
      [`capacity_block ${BLOCK}: c/train runs gpu-h200-sxm; the block reserves gpu-b200-sxm`],
    ],
    [
      "on another fabric",
      (v) => (block(v).status.resource_affinity.compute_v1.fabric = "us-central1-b"),
      [`capacity_block ${BLOCK}: c/train is on fabric us-central1-a; the block's is us-central1-b`],
    ],
    [
      "without enough GPUs left",
      (v) => (block(v).status.usage = "50"),
      [`capacity_block ${BLOCK}: needs 16 GPUs, 14 remain (limit 64, used 50)`],
    ],
    [
      "with unknown usage",
      (v) => (block(v).status.usage_state = "USAGE_STATE_UNKNOWN"),
      [`capacity_block ${BLOCK}: its usage is unknown (region unreachable): retry later`],
    ],
    [
      "with an unspecified usage state",
      (v) => delete block(v).status.usage_state,
      [`capacity_block ${BLOCK}: its usage state is USAGE_STATE_UNSPECIFIED: the usage cannot be read`],
    ],
    [
      "with a NOT_APPLICABLE usage state",
      (v) => (block(v).status.usage_state = "USAGE_STATE_NOT_APPLICABLE"),
      [`capacity_block ${BLOCK}: its usage state is USAGE_STATE_NOT_APPLICABLE: the usage cannot be read`],
    ],
    [
      "USED with no usage figure",
      (v) => delete block(v).status.usage,
      [`capacity_block ${BLOCK}: its usage is USED but the provider gave no figure`],
    ],
    [
      "reconciling",
      (v) => (block(v).status.reconciling = true),
      [`capacity_block ${BLOCK}: it is reconciling: its limit and usage are not settled, retry later`],
    ],
    [
      "for another service",
      (v) => (block(v).status.service = "storage"),
      [`capacity_block ${BLOCK}: it reserves for service storage, not compute`],
    ],
    [
      "without a status",
      (v) => delete block(v).status,
      [`capacity_block ${BLOCK}: the provider returned no status for it`],
    ],
    [
      "without compute_v1 affinity",
      (v) => delete block(v).status.resource_affinity.compute_v1,
      [`capacity_block ${BLOCK}: it reserves no compute capacity (no compute_v1 affinity)`],
    ],
    [
      "on no fabric while the workers' GPU cluster is on one",
      (v) => delete block(v).status.resource_affinity.compute_v1.fabric,
      [`capacity_block ${BLOCK}: c/train is on fabric us-central1-a; the block's is (none)`],
    ],
  ])(
    "refused when the block is %s; its GPUs then count against on-demand quota (0 H200)",
    async (_, edit, expected) => {
      const p = plan(MIXED, ["train"]);
      const r = evaluatePreflight(p, edited(await evidence(MIXED, p), "capacityBlockGroups", edit));
      expect(messages(r)).toEqual([
        ...expected,
        "quota compute.instance.gpu.h200: compute.instance.gpu.h200 [us-central1]: needs 16, 0 available (limit 0, used 0)",
      ]);
      expect(r.capacityBlocks[0]?.ok).toBe(false);
    },
  );

  it("listed twice in the tenant's list: an evidence shortfall, the block unvalidated", async () => {
    const p = plan(MIXED, ["train"]);
    const r = evaluatePreflight(
      p,
      edited(await evidence(MIXED, p), "capacityBlockGroups", (v) => v.items.push(structuredClone(block(v)))),
    );
    expect(messages(r)).toEqual([
      `evidence capacity-block-groups: capacity block group list: ${BLOCK} is listed 2 times`,
      "quota compute.instance.gpu.h200: compute.instance.gpu.h200 [us-central1]: needs 16, 0 available (limit 0, used 0)",
    ]);
    expect(r.capacityBlocks[0]?.ok).toBe(false);
  });

  it("two clusters on one block need its GPUs together", async () => {
    const p = plan(MIXED, ["train"]);
    const c = p.projects[0];
    const train = c?.clusters[0];
    if (!c || !train) throw new Error("no train cluster");
    c.clusters.push({ ...structuredClone(train), name: "train2" });
    const r = evaluatePreflight(p, await evidence(MIXED, p));
    expect(messages(r)).toEqual([
      `capacity_block ${BLOCK}: needs 32 GPUs, 24 remain (limit 64, used 40)`,
      "quota compute.instance.gpu.h200: compute.instance.gpu.h200 [us-central1]: needs 32, 0 available (limit 0, used 0)",
    ]);
    expect(r.capacityBlocks).toMatchObject([{ id: BLOCK, requiredGpus: 32, remainingGpus: 24, ok: false }]);
  });

  it("workers without a GPU cluster cannot use a block on a fabric", async () => {
    const l = parseFleetSpecText(
      fixtureText(MIXED.spec).replace("enable_gpu_cluster: true", "enable_gpu_cluster: false"),
    );
    if (!l.ok) throw new Error(JSON.stringify(l.issues));
    const built = buildPlan(
      l.fleet,
      { tenantId: MIXED.tenantId, profile: "", tenantFrom: "spec" },
      { onlyClusters: ["train"] },
    );
    if (!built.ok) throw new Error(JSON.stringify(built.issues));
    const r = evaluatePreflight(built.plan, await evidence(MIXED, built.plan));
    expect(messages(r)[0]).toBe(
      `capacity_block ${BLOCK}: c/train is on fabric (none: no GPU cluster); the block's is us-central1-a`,
    );
    expect(r.verdict).toBe("refuse");
  });

  const intervalsEdited = (e: Evidence, edit: (v: Doc) => void): Evidence => {
    const read = e.capacityIntervals[BLOCK];
    if (!read?.ok) throw new Error("not read");
    const value = structuredClone(read.value) as Doc;
    edit(value);
    return { ...e, capacityIntervals: { [BLOCK]: { ok: true, value } } };
  };
  const INTERVAL = "capacity interval capacityinterval-e00train0001a";
  it.each<[string, (v: Doc) => void, string]>([
    [
      "an empty interval list",
      (v) => (v.items = []),
      `capacity_block ${BLOCK}: none of its capacity intervals is active now`,
    ],
    [
      "an interval of another block",
      (v) => (v.items[0].metadata.parent_id = "capacityblockgroup-e00other0001"),
      `capacity_block ${BLOCK}: ${INTERVAL} belongs to capacityblockgroup-e00other0001, not ${BLOCK}`,
    ],
    [
      "an interval for another tenant",
      (v) => (v.items[0].status.container_id = "tenant-e00other0001"),
      `capacity_block ${BLOCK}: ${INTERVAL} is for tenant-e00other0001, not tenant tenant-e00mixedfleet`,
    ],
    [
      "an interval in another region",
      (v) => (v.items[0].status.region = "eu-north1"),
      `capacity_block ${BLOCK}: ${INTERVAL} is in region eu-north1, not us-central1`,
    ],
    [
      "an interval for another service",
      (v) => delete v.items[0].status.service,
      `capacity_block ${BLOCK}: ${INTERVAL} reserves for service (none), not compute`,
    ],
    [
      "a reconciling interval",
      (v) => (v.items[0].status.reconciling = true),
      `capacity_block ${BLOCK}: ${INTERVAL} is reconciling: retry later`,
    ],
    [
      "an interval list without items ({})",
      (v) => delete v.items,
      `evidence capacity-intervals-${BLOCK}: capacity intervals of ${BLOCK}: not the provider's shape (items: a list response needs its items array)`,
    ],
  ])("refused with %s", async (_, edit, first) => {
    const p = plan(MIXED, ["train"]);
    const r = evaluatePreflight(p, intervalsEdited(await evidence(MIXED, p), edit));
    expect(messages(r)[0]).toBe(first);
    expect(r.capacityBlocks[0]?.ok).toBe(false);
  });

  it.each<[string, (e: Evidence) => Evidence, string]>([
    [
      "an empty object as the block list",
      (e) => ({ ...e, capacityBlockGroups: { ok: true, value: {} } }),
      "evidence capacity-block-groups: capacity block group list: not the provider's shape (items: a list response needs its items array)",
    ],
    [
      "an error object as the block's resources",
      (e) => ({
        ...e,
        capacityBlockGroupResources: { [BLOCK]: { ok: true, value: { code: 7, message: "permission denied" } } },
      }),
      `evidence capacity-block-group-resources-${BLOCK}: resources of ${BLOCK}: not the provider's shape (top: Unrecognized keys: "code", "message")`,
    ],
  ])("%s refuses the block", async (_, mutate, first) => {
    const p = plan(MIXED, ["train"]);
    const r = evaluatePreflight(p, mutate(await evidence(MIXED, p)));
    expect(messages(r)[0]).toBe(first);
    expect(r.capacityBlocks[0]?.ok).toBe(false);
  });

  it("a block with no instances yet lists none ({}: protobuf JSON leaves an empty list out)", async () => {
    const p = plan(MIXED, ["train"]);
    const e = await evidence(MIXED, p);
    const r = evaluatePreflight(p, { ...e, capacityBlockGroupResources: { [BLOCK]: { ok: true, value: {} } } });
    expect(messages(r)).toEqual([]);
    expect(r.capacityBlocks[0]).toMatchObject({ instances: 0, ok: true });
  });

  it("refused when none of its intervals is active now", async () => {
    const p = plan(MIXED, ["train"]);
    const e = await evidence(MIXED, p);
    const intervals = e.capacityIntervals[BLOCK];
    if (!intervals?.ok) throw new Error("not read");
    const expired = structuredClone(intervals.value) as Doc;
    expired.items[0].status.state = "STATE_EXPIRED";
    const r = evaluatePreflight(p, { ...e, capacityIntervals: { [BLOCK]: { ok: true, value: expired } } });
    expect(messages(r)[0]).toBe(`capacity_block ${BLOCK}: none of its capacity intervals is active now`);
  });
});

describe("fail-closed evidence", () => {
  it.each<[string, (e: Evidence) => Evidence, string]>([
    [
      "a missing quota file",
      (e) => ({ ...e, quotaAllowances: { ok: false, error: "quota-allowances.json is missing from /ev" } }),
      "evidence quota-allowances: quota allowance list: quota-allowances.json is missing from /ev",
    ],
    [
      "JSON that is not the provider's shape",
      (e) => ({ ...e, quotaAllowances: { ok: true, value: { items: [{ spec: { limit: "x" } }] } } }),
      "evidence quota-allowances: quota allowance list: not the provider's shape (items.0.metadata: Invalid input: expected object, received undefined)",
    ],
    [
      "a list that is one page of several",
      (e) => ({ ...e, quotaAllowances: { ok: true, value: { items: [], next_page_token: "abc" } } }),
      "evidence quota-allowances: quota allowance list: only one page of several (next_page_token set); list with --all",
    ],
    [
      "an error object saved as the project list",
      (e) => ({ ...e, projects: { ok: true, value: { code: 7, message: "permission denied" } } }),
      "evidence projects: project list: not the provider's shape (items: a list response needs its items array)",
    ],
    [
      "an empty object saved as the project list",
      (e) => ({ ...e, projects: { ok: true, value: {} } }),
      "evidence projects: project list: not the provider's shape (items: a list response needs its items array)",
    ],
    [
      "a project list with a key the proto does not declare",
      (e) => ({ ...e, projects: { ok: true, value: { items: [], error: "partial" } } }),
      `evidence projects: project list: not the provider's shape (top: Unrecognized key: "error")`,
    ],
    [
      "an error object saved as the quota allowance list",
      (e) => ({ ...e, quotaAllowances: { ok: true, value: { code: 7, message: "permission denied" } } }),
      "evidence quota-allowances: quota allowance list: not the provider's shape (items: a list response needs its items array)",
    ],
    [
      "an unreadable project list",
      (e) => ({ ...e, projects: { ok: false, error: "nebius iam project list failed: exit 1: permission denied" } }),
      "evidence projects: project list: nebius iam project list failed: exit 1: permission denied",
    ],
  ])("%s refuses", async (_, mutate, first) => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, mutate(await evidence(FLEET1, p)));
    expect(r.verdict).toBe("refuse");
    expect(messages(r)[0]).toBe(first);
  });

  it("without a quota list every quota line is unverified, none passes", async () => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, { ...(await evidence(FLEET1, p)), quotaAllowances: { ok: false, error: "gone" } });
    expect(r.quotas.length).toBeGreaterThan(10);
    expect(r.quotas.every((q) => !q.ok && q.available === null)).toBe(true);
  });

  it("an unknown project inventory charges every named project as new and verifies none", async () => {
    const p = plan(FLEET1);
    const r = evaluatePreflight(p, { ...(await evidence(FLEET1, p)), projects: { ok: false, error: "gone" } });
    expect(r.projects.map((x) => x.verified)).toEqual([false, false]);
    expect(r.quotas.find((q) => q.name === "vpc.network.count")?.required).toBe(2);
  });

  it("the directory source names what is missing; a block's missing files refuse it", async () => {
    const p = plan(MIXED, ["train"]);
    const e = await gatherEvidence(evidenceNeeds(p), directoryEvidence(`${FIXTURES}evidence/fleet1-test`));
    const r = evaluatePreflight(p, e);
    expect(messages(r)).toEqual([
      `evidence capacity-block-groups: capacity block group list: capacity-block-groups.json is missing from ${FIXTURES}evidence/fleet1-test`,
      `evidence capacity-intervals-${BLOCK}: capacity intervals of ${BLOCK}: capacity-intervals-${BLOCK}.json is missing from ${FIXTURES}evidence/fleet1-test`,
      `evidence capacity-block-group-resources-${BLOCK}: resources of ${BLOCK}: capacity-block-group-resources-${BLOCK}.json is missing from ${FIXTURES}evidence/fleet1-test`,
      // That directory's allowances are another tenant's.
      "evidence quota-allowances: quota allowance list: 23 of its allowances belong to tenant-e00fleet1test00, not tenant tenant-e00mixedfleet",
    ]);
  });

  it("a file that is not JSON, or empty, is named", async () => {
    const fs = await import("node:fs/promises");
    const os = await import("node:os");
    const dir = await fs.mkdtemp(`${os.tmpdir()}/fleet-evidence-`);
    await fs.writeFile(`${dir}/quota-allowances.json`, "{ items: [");
    await fs.writeFile(`${dir}/projects.json`, "");
    const source = directoryEvidence(dir);
    await expect(source.quotaAllowances("t")).rejects.toThrow(/^quota-allowances\.json is not JSON/);
    await expect(source.projects("t")).rejects.toThrow("projects.json is empty");
    await fs.rm(dir, { recursive: true });
  });
});
