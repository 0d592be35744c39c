import { describe, expect, it } from "vitest";
import {
  ACTIVE_JOB_STATUSES,
  JOB_STATUSES,
  TERMINAL_JOB_STATUSES,
  canTransition,
  JobCreateSchema,
  JobReportSchema,
  JobSchema,
  JobSignalCreateSchema,
  jobRefusal,
  siteJobRefusal,
  type Job,
  type JobCreate,
} from "./jobs.ts";
import type { BurnInTestResult } from "./burn-in.ts";
import { repairMaintenanceReason, repairReason, workflowInputOf } from "./workflows.ts";

const DEVICE = "0190a5b4-1234-7abc-8def-0123456789ab";

describe("JobCreateSchema: one params schema per kind", () => {
  it("applies the kind's defaults, also when params are left out", () => {
    const burnIn: JobCreate = JobCreateSchema.parse({ kind: "BURN_IN", deviceIds: [DEVICE] });
    expect(burnIn).toEqual({
      kind: "BURN_IN",
      deviceIds: [DEVICE],
      params: { durationMinutes: 60, tests: ["hardware-tests"] },
    });
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
    burnIn: [],
    logsUrl: null,
    workflowId: null,
    signal: null,
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
    expect(workflowInputOf(JobSchema.parse(job("REPAIR", { ticket: "FLEET-1" })))).toMatchObject({
      kind: "REPAIR",
      params: { ticket: "FLEET-1", burnInMinutes: 60 },
    });
    expect(workflowInputOf(JobSchema.parse(job("NODE_SWAP", { spareDeviceId: DEVICE })))).toMatchObject({
      kind: "NODE_SWAP",
      params: { spareDeviceId: DEVICE },
    });
    expect(JobSchema.safeParse(job("REIMAGE", { durationMinutes: 5 })).success).toBe(false);
  });
});

describe("IMAGE_NODE", () => {
  const create = (params: unknown) => JobCreateSchema.safeParse({ kind: "IMAGE_NODE", deviceIds: [DEVICE], params });
  const paths = (params: unknown) => create(params).error?.issues.map((i) => [i.path.join("."), i.message]);

  it("takes a Glance image alone, and a URL only with a digest of the algorithm's length", () => {
    expect(create({ image: "0190a5b4-3333-7000-8000-000000000001" }).success).toBe(true);
    const url = "https://images.example/ubuntu.qcow2";
    expect(
      create({ image: url, osHash: { algo: "sha256", value: "ab".repeat(32) }, userData: "#cloud-config\n" }).success,
    ).toBe(true);
    expect(paths({ image: url })).toEqual([
      ["params.osHash", "an image URL needs its digest (Glance images carry their own)"],
    ]);
    expect(paths({ image: url, osHash: { algo: "sha512", value: "ab".repeat(32) } })).toEqual([
      ["params.osHash.value", "a sha512 digest has 128 hex digits"],
    ]);
    expect(paths({ image: url, osHash: { algo: "sha256", value: "zz".repeat(32) } })).toEqual([
      ["params.osHash.value", "must be a hex digest"],
    ]);
    expect(paths({ image: "x", userData: "a".repeat(64 * 1024 + 1) })?.[0]?.[0]).toBe("params.userData");
  });

  const device = (o: { status?: "active" | "staged"; state?: string | null; cordoned?: boolean; missing?: boolean }) =>
    ({
      name: "gpu001",
      netbox: { status: o.status ?? "active", missing: o.missing ?? false },
      ironic: { provisionState: o.state === undefined ? "available" : o.state },
      cordoned: o.cordoned ?? false,
    }) as unknown as Parameters<typeof jobRefusal>[1];

  it.each([
    [{}, null],
    [{ state: "active" }, "gpu001 is not available to deploy an image on (Ironic active)"],
    [{ state: "manageable" }, "gpu001 is not available to deploy an image on (Ironic manageable)"],
    [{ state: null }, "gpu001 is not available to deploy an image on (Ironic unknown)"],
    [{ status: "staged" as const }, "gpu001 is not enrolled (NetBox status staged)"],
    [{ cordoned: true }, "gpu001 is cordoned: uncordon it before deploying an image"],
    [{ missing: true }, "gpu001 is no longer in NetBox"],
  ])("refuses a device that cannot take an image: %o → %s", (o, refusal) => {
    expect(jobRefusal("IMAGE_NODE", device(o))).toBe(refusal);
  });

  it("refuses to hand over a cordoned device, and still burns one in", () => {
    expect(jobRefusal("RELEASE", device({ cordoned: true }))).toBe(
      "gpu001 is cordoned: uncordon it before handing it over",
    );
    expect(jobRefusal("RELEASE", device({}))).toBeNull();
    expect(jobRefusal("BURN_IN", device({ cordoned: true }))).toBeNull();
  });
});

describe("job status transitions", () => {
  it("an ended job never moves again; an active one moves only forward", () => {
    for (const ended of TERMINAL_JOB_STATUSES)
      for (const to of JOB_STATUSES) expect(canTransition(ended, to), `${ended} → ${to}`).toBe(to === ended);
    // Backward, from every active status to every one before it in the lifecycle: refused.
    for (const from of ACTIVE_JOB_STATUSES)
      for (const to of ACTIVE_JOB_STATUSES.slice(0, ACTIVE_JOB_STATUSES.indexOf(from)))
        expect(canTransition(from, to), `${from} → ${to}`).toBe(false);
    // Forward, the lifecycle's own steps: taken.
    expect(canTransition("PENDING", "SUBMITTED")).toBe(true);
    expect(canTransition("SUBMITTED", "RUNNING")).toBe(true);
    expect(canTransition("RUNNING", "CANCELLING")).toBe(true);
    expect(canTransition("RUNNING", "SUCCEEDED")).toBe(true);
    expect(canTransition("CANCELLING", "CANCELLED")).toBe(true);
  });
});

describe("repair reasons", () => {
  it("carry the ticket and the description's first line, on one line, within what SLURM and Ironic keep", () => {
    expect(repairReason({ ticket: "OPS-7" })).toBe("repair OPS-7");
    expect(repairReason({ ticket: "OPS-7", description: "GPU 3 fell off the bus\nXID 79 twice" })).toBe(
      "repair OPS-7: GPU 3 fell off the bus",
    );
    expect(repairReason({ ticket: "OPS-7", description: "tab\there" })).toBe("repair OPS-7: tab here");
    expect(repairReason({ ticket: "OPS-7", description: "x".repeat(400) })).toHaveLength(200);
    expect(repairMaintenanceReason({ ticket: "OPS-7", description: "x".repeat(400) })).toHaveLength(214);
    expect(repairMaintenanceReason({ ticket: "OPS-7" })).toBe("fleet-manager repair OPS-7");
  });
});

describe("JobSignalCreateSchema", () => {
  it("takes repaired or failed with an optional note, and nothing else", () => {
    expect(JobSignalCreateSchema.parse({ outcome: "repaired", note: " swapped PSU " })).toEqual({
      outcome: "repaired",
      note: "swapped PSU",
    });
    expect(JobSignalCreateSchema.safeParse({ outcome: "fixed" }).success).toBe(false);
    expect(JobSignalCreateSchema.safeParse({ outcome: "failed", extra: 1 }).success).toBe(false);
    expect(JobSignalCreateSchema.safeParse({ outcome: "failed", note: "" }).success).toBe(false);
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

describe("JobReportSchema: what a workflow reports", () => {
  const dev = (n: number) => `0190a5b4-0000-7000-8000-00000000000${n}`;
  const test = (passed: boolean): BurnInTestResult => ({
    test: "hardware-tests",
    passed,
    exitCode: 0,
    image: null,
    architecture: "x86_64",
    figures: {
      gpus: [],
      xids: passed ? [] : [{ pciAddress: "0000:1b:00", code: 79, message: "off the bus" }],
      reasons: [],
    },
    artifacts: [],
  });
  const issues = (body: unknown) =>
    (JobReportSchema.safeParse(body).error?.issues ?? []).map((i) => `${i.path.join(".")}: ${i.message}`);

  it("refuses a burn-in status its tests do not give (a PASSED over an Xid), and takes the one they do", () => {
    expect(issues({ burnIn: [{ deviceId: dev(1), status: "PASSED", tests: [test(false)] }] })).toEqual([
      "burnIn.0.status: must be PASSED exactly when every test passed",
    ]);
    expect(issues({ burnIn: [{ deviceId: dev(1), status: "FAILED", tests: [test(true)] }] })).toHaveLength(1);
    expect(
      issues({
        burnIn: [
          { deviceId: dev(1), status: "FAILED", tests: [test(false)] },
          { deviceId: dev(2), status: "PASSED", tests: [test(true)] },
        ],
      }),
    ).toEqual([]);
  });

  it("refuses a device twice in one report's results, cordons or observations, naming the repeat", () => {
    const result = { deviceId: dev(1), status: "PASSED", tests: [test(true)] };
    expect(issues({ burnIn: [result, { ...result, status: "FAILED", tests: [test(false)] }] })).toEqual([
      `burnIn.1.deviceId: '${dev(1)}' repeats item 0: must be unique`,
    ]);
    expect(
      issues({
        cordons: [
          { deviceId: dev(1), cordoned: true, reason: "repair OPS-1" },
          { deviceId: dev(2), cordoned: true, reason: "repair OPS-1" },
          { deviceId: dev(1), cordoned: false },
        ],
      }),
    ).toEqual([`cordons.2.deviceId: '${dev(1)}' repeats item 0: must be unique`]);
    expect(issues({ devices: [{ deviceId: dev(3) }, { deviceId: dev(3) }] })).toEqual([
      `devices.1.deviceId: '${dev(3)}' repeats item 0: must be unique`,
    ]);
    expect(
      issues({
        cordons: [
          { deviceId: dev(1), cordoned: false },
          { deviceId: dev(2), cordoned: false },
        ],
      }),
    ).toEqual([]);
  });
});
