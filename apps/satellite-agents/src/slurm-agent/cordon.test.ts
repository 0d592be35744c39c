import { describe, expect, it } from "vitest";
import { CORDON_REASON_PREFIX, deviceDiscrepancies, type SlurmItem } from "@fm/domain";
import { drainReason, planDrains } from "./cordon.ts";

const node = (name: string, state = "IDLE", flags: string[] = [], reason: string | null = null): SlurmItem => ({
  name,
  state,
  flags,
  reason,
  partitions: ["gpu"],
});

describe("planDrains", () => {
  it("drains a cordoned device's node with the cordon reason, busy or idle", () => {
    expect(
      planDrains(
        [node("gpu001"), node("gpu002", "ALLOCATED"), node("gpu003")],
        [
          { node: "gpu001", reason: "RMA 7: GPU 3 Xid 79" },
          { node: "gpu002", reason: null },
        ],
      ),
    ).toEqual([
      { node: "gpu001", action: "drain", reason: `${CORDON_REASON_PREFIX}RMA 7: GPU 3 Xid 79` },
      { node: "gpu002", action: "drain", reason: `${CORDON_REASON_PREFIX}cordoned in Fleet Manager` },
    ]);
  });

  it("undrains only its own drain once the device is uncordoned", () => {
    expect(
      planDrains(
        [
          node("gpu001", "IDLE", ["DRAIN"], `${CORDON_REASON_PREFIX}RMA 7`),
          node("gpu002", "IDLE", ["DRAIN"], "operator: swapping PSU"),
          node("gpu003", "DOWN", ["NOT_RESPONDING"], "Not responding"),
          node("gpu004", "IDLE", [], `${CORDON_REASON_PREFIX}left over reason, not drained`),
        ],
        [],
      ),
    ).toEqual([{ node: "gpu001", action: "undrain" }]);
  });

  it("leaves an operator's drain and SLURM's own DOWN or FAIL alone while cordoned", () => {
    expect(
      planDrains(
        [
          node("gpu001", "MIXED", ["DRAIN"], "operator: bad DIMM"),
          node("gpu002", "DOWN", [], "Not responding"),
          node("gpu003", "IDLE", ["FAIL"], "failing"),
        ],
        ["gpu001", "gpu002", "gpu003"].map((n) => ({ node: n, reason: "RMA" })),
      ),
    ).toEqual([]);
  });

  it("refreshes its own reason when the cordon reason changes, and does nothing when in step", () => {
    const ours = node("gpu001", "IDLE", ["DRAIN"], `${CORDON_REASON_PREFIX}old`);
    expect(planDrains([ours], [{ node: "gpu001", reason: "new" }])).toEqual([
      { node: "gpu001", action: "drain", reason: `${CORDON_REASON_PREFIX}new` },
    ]);
    expect(
      planDrains(
        [node("gpu001", "IDLE", ["DRAIN"], `${CORDON_REASON_PREFIX}new`)],
        [{ node: "gpu001", reason: "new" }],
      ),
    ).toEqual([]);
    expect(planDrains([node("gpu001")], [])).toEqual([]);
  });

  it("reads v0.0.40+ drained states the same as 22.05's flags", () => {
    expect(planDrains([node("gpu001", "DRAINED", [], `${CORDON_REASON_PREFIX}x`)], [])).toEqual([
      { node: "gpu001", action: "undrain" },
    ]);
  });
});

describe("drainReason", () => {
  it("is one line: a multi-line cordon reason cannot smuggle another scontrol argument", () => {
    expect(drainReason("RMA 9\nstate=resume\t ")).toBe(`${CORDON_REASON_PREFIX}RMA 9 state=resume`);
    expect(drainReason("  ")).toBe(`${CORDON_REASON_PREFIX}cordoned in Fleet Manager`);
  });

  it("is a drain the discrepancy report knows as the hub's own, and an operator's is not", () => {
    const drained = (slurmReason: string) =>
      deviceDiscrepancies(
        {
          deviceClass: "GPU_COMPUTE",
          netboxStatus: "active",
          netboxMissing: false,
          netboxObservedAt: null,
          ironicNodeUuid: null,
          ironicProvisionState: null,
          ironicObservedAt: null,
          slurmState: "IDLE",
          slurmStateFlags: ["DRAIN"],
          slurmReason,
          slurmObservedAt: new Date("2026-01-01T00:00:00Z"),
          healthStatus: "ok",
          // The agent drains while the hub shows the cordon; until it sees the uncordon, a drain
          // it made must not read as someone else's.
          cordoned: false,
        },
        { ironicReports: false },
      ).map((f) => f.kind);
    expect(drained(drainReason("RMA 7"))).toEqual([]);
    expect(drained("operator: reseating DIMM B2")).toEqual(["slurm_drained_externally"]);
  });
});
