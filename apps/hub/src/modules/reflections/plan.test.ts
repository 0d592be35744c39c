/**
 * planAnnotations, table by table: which item matches which device, what changes, what the source
 * no longer lists, and whose discrepancies a push may change (as the agents' mapping files are
 * tested). annotations.ts writes what it decides; the integration tests hold the writing.
 */
import type { HealthItem, IronicItem, SlurmItem } from "@fm/domain";
import { describe, expect, it } from "vitest";
import { planAnnotations } from "./plan.ts";
import type { AnnotatedDevice } from "./repo.ts";
import { health } from "./sources/health.ts";
import { DeviceIndex } from "./sources/index.ts";
import { ironic } from "./sources/ironic.ts";
import { slurm } from "./sources/slurm.ts";

const BEFORE = new Date("2026-12-01T10:00:00Z");
const NOW = new Date("2026-12-01T10:05:00Z");
const UUID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

function device(id: string, fields: Partial<AnnotatedDevice> = {}): AnnotatedDevice {
  return {
    id,
    name: id,
    serial: null,
    ironicInstance: null,
    ironicNodeUuid: null,
    ironicProvisionState: null,
    ironicTargetProvisionState: null,
    ironicPowerState: null,
    ironicMaintenance: null,
    ironicMaintenanceReason: null,
    ironicLastError: null,
    ironicFault: null,
    slurmNodeName: null,
    slurmState: null,
    slurmStateFlags: [],
    slurmReason: null,
    slurmPartitions: [],
    healthStatus: null,
    healthConditions: null,
    healthSince: null,
    ironicObservedAt: null,
    slurmObservedAt: null,
    healthObservedAt: null,
    ...fields,
  };
}

const node = (uuid: string, fields: Partial<IronicItem> = {}): IronicItem => ({
  uuid,
  name: null,
  serial: null,
  provisionState: "active",
  targetProvisionState: null,
  powerState: "power on",
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
  ...fields,
});

/** A device as the overcloud last listed it, from `item`. */
const listedBy = (id: string, item: IronicItem, extra: Partial<AnnotatedDevice> = {}) =>
  device(id, {
    ironicInstance: "overcloud",
    ironicNodeUuid: item.uuid,
    ironicProvisionState: item.provisionState,
    ironicPowerState: item.powerState,
    ironicMaintenance: item.maintenance,
    ironicObservedAt: BEFORE,
    ...extra,
  });

describe("planAnnotations: Ironic", () => {
  const overcloud = ironic("overcloud");

  it.each([
    [
      "the node UUID first, over a name another device has",
      [device("a", { ironicNodeUuid: UUID(1) }), device("b", { name: "gpu-1" })],
      node(UUID(1), { name: "gpu-1" }),
      "a",
    ],
    ["the name when no device holds the UUID", [device("b", { name: "gpu-1" })], node(UUID(1), { name: "gpu-1" }), "b"],
    [
      "the serial when neither UUID nor name matches",
      [device("c", { name: "other", serial: "SN1" })],
      node(UUID(1), { name: "gpu-1", serial: "SN1" }),
      "c",
    ],
    ["nothing when none matches", [device("d")], node(UUID(1), { name: "gpu-1", serial: "SN9" }), undefined],
  ])("matches by %s", (_what, devices, item, id) => {
    const plan = planAnnotations(new DeviceIndex(devices), [item], overcloud, NOW);
    expect(plan.seen).toEqual(id ? [id] : []);
    expect(plan.unmatched).toEqual(id ? [] : ["gpu-1"]);
  });

  it("reports unmatched, by name or else UUID, an item whose device an earlier item took, and a node another site holds", () => {
    const devices = [device("a", { name: "gpu-1" }), device("b", { name: "gpu-2" })];
    const items = [
      node(UUID(1), { name: "gpu-1" }),
      node(UUID(2), { name: "gpu-1" }),
      node(UUID(3), { name: "gpu-2" }),
    ];
    const plan = planAnnotations(new DeviceIndex(devices), items, overcloud, NOW, new Set([UUID(3)]));
    expect(plan.seen).toEqual(["a"]);
    expect(plan.unmatched).toEqual(["gpu-1", "gpu-2"]);
    const unnamed = planAnnotations(new DeviceIndex([]), [node(UUID(4))], overcloud, NOW);
    expect(unnamed.unmatched).toEqual([UUID(4)]);
  });

  it("changes only what differs, and counts the rest unchanged", () => {
    const same = node(UUID(1), { name: "a" });
    const moved = node(UUID(2), { name: "b", provisionState: "clean failed", lastError: "nvme3n1" });
    const devices = [listedBy("a", same), listedBy("b", node(UUID(2), { name: "b" }))];
    const plan = planAnnotations(new DeviceIndex(devices), [same, moved], overcloud, NOW);
    expect(plan.unchanged).toBe(1);
    expect(plan.changing).toEqual([
      {
        id: "b",
        changes: expect.objectContaining({ ironicProvisionState: "clean failed", ironicLastError: "nvme3n1" }),
      },
    ]);
    expect(plan.changing[0]!.changes).not.toHaveProperty("ironicObservedAt");
  });

  it("clears devices this instance listed before and no longer lists, not the other instance's", () => {
    const gone = listedBy("gone", node(UUID(1)));
    const undercloud = listedBy("under", node(UUID(2)), { ironicInstance: "undercloud" });
    const plan = planAnnotations(new DeviceIndex([gone, undercloud]), [], overcloud, NOW);
    expect(plan.vanished.map((d) => d.id)).toEqual(["gone"]);
  });

  it("touches devices it observes for the first time, and those it has never reported (Ironic judges them)", () => {
    const first = device("first", { name: "gpu-1" });
    const known = listedBy("known", node(UUID(2), { name: "gpu-2" }));
    const unreported = device("unreported");
    const items = [node(UUID(1), { name: "gpu-1" }), node(UUID(2), { name: "gpu-2" })];
    const plan = planAnnotations(new DeviceIndex([first, known, unreported]), items, overcloud, NOW);
    expect([...plan.touched].sort()).toEqual(["first", "unreported"]);
  });
});

describe("planAnnotations: SLURM", () => {
  const item = (name: string, fields: Partial<SlurmItem> = {}): SlurmItem => ({
    name,
    state: "IDLE",
    flags: [],
    reason: null,
    partitions: ["gpu"],
    ...fields,
  });

  it.each([
    ["the node recorded on a device first", [device("a", { slurmNodeName: "n1" }), device("n1")], item("n1"), "a"],
    [
      "the device the agent names",
      [device("a", { name: "gpu-1" }), device("n1")],
      item("n1", { device: "gpu-1" }),
      "a",
    ],
    ["the node's own name when the agent names none", [device("n1")], item("n1"), "n1"],
    ["nothing when the agent says no device has its name", [device("n1")], item("n1", { device: null }), undefined],
  ])("matches by %s", (_what, devices, node, id) => {
    expect(planAnnotations(new DeviceIndex(devices), [node], slurm, NOW).seen).toEqual(id ? [id] : []);
  });

  it("touches only devices it observes for the first time: SLURM does not judge devices it never listed", () => {
    const devices = [device("n1"), device("n2", { slurmObservedAt: BEFORE, slurmNodeName: "n2" }), device("other")];
    const plan = planAnnotations(new DeviceIndex(devices), [item("n1"), item("n2")], slurm, NOW);
    expect([...plan.touched]).toEqual(["n1"]);
    expect(plan.vanished).toEqual([]);
  });
});

describe("planAnnotations: health", () => {
  const verdict = (name: string, status: HealthItem["status"]): HealthItem => ({ name, status, conditions: [] });

  it.each([
    ["a new status starts healthSince at the push's moment", "ok", "critical", { healthSince: NOW }],
    ["the same status keeps it", "critical", "critical", {}],
  ])("%s", (_what, was, now, since) => {
    const d = device("a", { healthStatus: was, healthConditions: [], healthObservedAt: BEFORE, healthSince: BEFORE });
    const plan = planAnnotations(new DeviceIndex([d]), [verdict("a", now as HealthItem["status"])], health, NOW);
    const changes = plan.changing[0]?.changes ?? {};
    expect(changes).toEqual(was === now ? {} : { healthStatus: now, healthConditions: [], ...since });
    expect(plan.unchanged).toBe(was === now ? 1 : 0);
  });

  it("clears a device it reported before and no longer lists", () => {
    const plan = planAnnotations(new DeviceIndex([device("a", { healthObservedAt: BEFORE })]), [], health, NOW);
    expect(plan.vanished.map((d) => d.id)).toEqual(["a"]);
  });
});
