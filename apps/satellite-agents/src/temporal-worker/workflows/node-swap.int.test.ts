/**
 * The NODE_SWAP workflow on a real Temporal dev server, with canned activities that log what
 * they were asked (the activities run against the NetBox test server and a Redfish BMC in
 * ../activities/node-swap.int.test.ts, everything together in test/node-swap.e2e.test.ts): the
 * order the rollout guide gives, a MAC step failure that writes nothing to the hub or Ironic,
 * and a site without a topology region.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowFailedError } from "@temporalio/client";
import { ApplicationFailure } from "@temporalio/activity";
import { Worker } from "@temporalio/worker";
import {
  JOB_WORKFLOWS,
  type JobPlan,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type StepFailureDetails,
} from "@fm/domain/workflows";
import type { Activities } from "../activities/index.ts";
import { testDevice, useTemporal, WORKFLOWS_PATH } from "../workflow-testing.ts";

const temporal = useTemporal();
let queue = 0;

const device = testDevice;
const FAILED = device(1, { ironicNodeUuid: "0190a5b4-1111-7000-8000-000000000001" });
const SPARE = device(2);
const site = (region: string | null): JobPlan["site"] => ({
  slug: "t1",
  slurmEnabled: false,
  configureDhcp: false,
  platformClassActivityReady: false,
  topologyRegion: region,
});

/** Runs a NODE_SWAP on its own task queue; returns its outcome and the activities called, in order. */
async function runSwap(activities: Partial<Activities>, region: string | null = "us-east-1") {
  const calls: string[] = [];
  const taskQueue = `swap-test-${++queue}`;
  const log =
    <A extends unknown[], R>(name: string, fn: (...a: A) => Promise<R>) =>
    (...a: A) => {
      calls.push(name);
      return fn(...a);
    };
  const canned: Partial<Activities> = {
    preflight: async () => ({ site: site(region), devices: [FAILED] }),
    swapPlan: async (a) => ({
      failed: a.failed,
      spare: { ...SPARE, deviceId: a.spareDeviceId },
      target: { location: 1, rack: 2, position: 10, face: "front" },
      moved: false,
    }),
    swapBmcMacs: async () => [{ id: "eth0", mac: "7C:FE:90:5A:00:01" }],
    swapNetboxMacs: async () => "1 frontend MAC(s): 1 created, 0 reused, 1 primary set",
    hubCordon: async () => {},
    ironicMaintenance: async (d) => `${d.name}: maintenance`,
    swapNetboxRack: async () => "moved",
    swapNetboxCables: async () => "1 cable(s) on gpu002: 1 moved, 0 already there",
    hubTopologySync: async () => {},
    recordOnHub: async () => {},
    ...activities,
  };
  const logged = Object.fromEntries(
    Object.entries(canned).map(([k, fn]) => [k, log(k, fn as (...a: unknown[]) => Promise<unknown>)]),
  );
  const worker = await Worker.create({
    connection: temporal.native,
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: logged,
  });
  const input: JobWorkflowInput<"NODE_SWAP"> = {
    jobId: `0190a5b4-3333-7000-8000-0000000000${String(queue).padStart(2, "0")}`,
    jobName: `swap-test-${queue}`,
    kind: "NODE_SWAP",
    params: { spareDeviceId: SPARE.deviceId },
  };
  const outcome = await worker.runUntil(async () => {
    const handle = await temporal.client.workflow.start(JOB_WORKFLOWS.NODE_SWAP, {
      workflowId: `swap-test-${queue}`,
      taskQueue,
      args: [input],
    });
    return handle.result().then(
      (r: JobWorkflowResult) => ({ ok: true as const, result: r }),
      (err: unknown) => ({ ok: false as const, err }),
    );
  });
  return { outcome, calls, input };
}

describe("NODE_SWAP workflow", () => {
  it("runs the guide's order: MACs before any hub or Ironic write, then the rack move and the topology-sync request", async () => {
    const { outcome, calls } = await runSwap({});
    expect(outcome.ok).toBe(true);
    expect(calls).toEqual([
      "preflight",
      "swapPlan",
      "swapBmcMacs",
      "swapNetboxMacs",
      "hubCordon",
      "ironicMaintenance",
      "swapNetboxRack",
      "hubTopologySync",
      "recordOnHub",
    ]);
    if (outcome.ok)
      expect(outcome.result.steps.filter((s) => s.status !== "SUCCEEDED").map((s) => `${s.name}:${s.status}`)).toEqual([
        "netbox-cables:SKIPPED",
      ]);
  });

  it("a NetBox 403 at the MAC step ends the swap there: nothing is written to the hub or Ironic", async () => {
    const { outcome, calls } = await runSwap({
      swapNetboxMacs: async () => {
        throw ApplicationFailure.nonRetryable("POST /api/dcim/mac-addresses/ -> 403", "SourceRejected");
      },
    });
    expect(outcome.ok).toBe(false);
    expect(calls).toEqual(["preflight", "swapPlan", "swapBmcMacs", "swapNetboxMacs"]);
    const failure = (outcome as { err: WorkflowFailedError }).err.cause as ApplicationFailure;
    expect(failure.message).toBe("netbox-macs: POST /api/dcim/mac-addresses/ -> 403");
    const details = failure.details?.[0] as StepFailureDetails;
    expect(details.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      "preflight:SUCCEEDED",
      "validate:SUCCEEDED",
      "bmc-macs:SUCCEEDED",
      "netbox-macs:FAILED",
      "hub-cordon:PENDING",
      "ironic-maintenance:PENDING",
      "netbox-rack:PENDING",
      "netbox-cables:PENDING",
      "topology-sync:PENDING",
      "hub-record:PENDING",
    ]);
  });

  it("at a site without a topology region the request is skipped, and the cordon carries the swap's reason", async () => {
    const cordons: unknown[] = [];
    const { outcome, calls, input } = await runSwap({ hubCordon: async (_j, c) => void cordons.push(c) }, null);
    expect(outcome.ok).toBe(true);
    expect(calls).not.toContain("hubTopologySync");
    expect(cordons).toEqual([
      [{ deviceId: FAILED.deviceId, cordoned: true, reason: `node swap ${input.jobName}: gpu001 replaced by gpu002` }],
    ]);
    if (outcome.ok)
      expect(outcome.result.steps.find((s) => s.name === "topology-sync")).toMatchObject({
        status: "SKIPPED",
        message: "t1 is no topology target (no region)",
      });
  });

  it("a cabled tray's swap moves its cables and files no topology-sync request", async () => {
    const cable = {
      cableId: 7,
      iface: "eth0",
      end: "A" as const,
      far: [{ object_type: "dcim.interface", object_id: 900 }],
      status: "connected",
      type: null,
      label: "",
      color: "",
      length: null,
      lengthUnit: null,
      description: "",
    };
    const { outcome, calls } = await runSwap({
      swapPlan: async (a) => ({
        failed: a.failed,
        spare: { ...SPARE, deviceId: a.spareDeviceId },
        target: { location: 1, rack: 2, position: 10, face: "front" },
        moved: false,
        cables: [cable],
      }),
    });
    expect(outcome.ok).toBe(true);
    expect(calls.slice(-3)).toEqual(["swapNetboxRack", "swapNetboxCables", "recordOnHub"]);
    if (outcome.ok)
      expect(outcome.result.steps.find((s) => s.name === "topology-sync")).toMatchObject({ status: "SKIPPED" });
  });
});
