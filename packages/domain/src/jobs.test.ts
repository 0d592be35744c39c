import { describe, expect, it } from "vitest";
import { JobCreateSchema, JobSchema, jobRefusal, siteJobRefusal, type Job, type JobCreate } from "./jobs.ts";
import { workflowInputOf } from "./workflows.ts";

const DEVICE = "0190a5b4-1234-7abc-8def-0123456789ab";

describe("JobCreateSchema: one params schema per kind", () => {
  it("applies the kind's defaults, also when params are left out", () => {
    const burnIn: JobCreate = JobCreateSchema.parse({ kind: "BURN_IN", deviceIds: [DEVICE] });
    expect(burnIn).toEqual({ kind: "BURN_IN", deviceIds: [DEVICE], params: { durationMinutes: 60 } });
    if (burnIn.kind === "BURN_IN") expect(burnIn.params.durationMinutes).toBe(60); // typed per kind
    expect(JobCreateSchema.parse({ kind: "RELEASE", deviceIds: [DEVICE] }).params).toEqual({});
  });

  it("names an unknown or missing params field by its path", () => {
    const unknown = JobCreateSchema.safeParse({ kind: "ENROL", deviceIds: [DEVICE], params: { bogus: 1 } });
    expect(unknown.error?.issues).toEqual([
      expect.objectContaining({ code: "unrecognized_keys", path: ["params"], keys: ["bogus"] }),
    ]);
    const missing = JobCreateSchema.safeParse({ kind: "REIMAGE", deviceIds: [DEVICE] });
    expect(missing.error?.issues.map((i) => i.path)).toEqual([["params", "image"]]);
  });

  it("checks params against the job's own kind, not another's", () => {
    // `image` is REIMAGE's; a TEARDOWN does not take it.
    expect(JobCreateSchema.safeParse({ kind: "TEARDOWN", deviceIds: [DEVICE], params: { image: "x" } }).success).toBe(
      false,
    );
    expect(JobCreateSchema.safeParse({ kind: "SCRUB", deviceIds: [DEVICE], params: {} }).success).toBe(false);
  });
});

describe("Job representation", () => {
  const job = (kind: string, params: unknown) => ({
    id: DEVICE,
    name: "reimage-brisk-falcon-3fa2",
    kind,
    status: "PENDING",
    siteId: DEVICE,
    deviceIds: [DEVICE],
    params,
    steps: [],
    progress: 0,
    error: null,
    workflowId: null,
    createdBy: "fleet-admin",
    createdAt: "2025-06-01T12:00:00.000Z",
    updatedAt: "2025-06-01T12:00:00.000Z",
    cancelRequestedAt: null,
    finishedAt: null,
    version: 1,
  });

  it("parses params with the kind's schema, and the workflow input carries them typed by kind", () => {
    const parsed: Job = JobSchema.parse(job("REIMAGE", { image: "ubuntu-24.04" }));
    const input = workflowInputOf(parsed);
    expect(input?.kind === "REIMAGE" && input.params.image).toBe("ubuntu-24.04");
    expect(workflowInputOf(JobSchema.parse(job("REPAIR", { ticket: "FLEET-1" })))).toBeUndefined();
    expect(JobSchema.safeParse(job("REIMAGE", { durationMinutes: 5 })).success).toBe(false);
  });
});

describe("SLURM_ADOPT refusals", () => {
  const device = (o: { status?: string; state?: string | null; cordoned?: boolean; missing?: boolean } = {}) =>
    ({
      name: "gpu001",
      netbox: { status: o.status ?? "active", missing: o.missing ?? false },
      ironic: { provisionState: o.state === undefined ? "available" : o.state },
      cordoned: o.cordoned ?? false,
    }) as unknown as Parameters<typeof jobRefusal>[1];
  it.each([
    ["an enrolled, available, uncordoned node", {}, null],
    ["a node NetBox no longer lists", { missing: true }, "gpu001 is no longer in NetBox"],
    ["a staged node", { status: "staged" }, "gpu001 is not enrolled (NetBox status staged)"],
    ["a cordoned node", { cordoned: true }, "gpu001 is cordoned: uncordon it before adding it to SLURM"],
    [
      "a node already deployed",
      { state: "active" },
      "gpu001 must be available in Ironic for Nova to deploy it (it is active)",
    ],
    [
      "a node Ironic does not show",
      { state: null },
      "gpu001 must be available in Ironic for Nova to deploy it (it is unknown)",
    ],
  ])("%s", (_, o, refusal) => {
    expect(jobRefusal("SLURM_ADOPT", device(o))).toBe(refusal);
  });

  it("runs only where SLURM is reached through OpenStack; other kinds do not care", () => {
    expect(siteJobRefusal("SLURM_ADOPT", { slug: "kef", openstackSlurmEnabled: true })).toBeNull();
    expect(siteJobRefusal("SLURM_ADOPT", { slug: "kef", openstackSlurmEnabled: false })).toMatch(
      /SLURM is not reached through OpenStack at kef/,
    );
    expect(siteJobRefusal("RELEASE", { slug: "kef", openstackSlurmEnabled: false })).toBeNull();
  });
});
