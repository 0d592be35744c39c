import { describe, expect, it } from "vitest";
import { CORDON_REASON_PREFIX, type IronicItem } from "@fm/domain";
import { planMaintenance } from "./cordon.ts";

const node = (
  uuid: string,
  name: string,
  maintenance = false,
  maintenanceReason: string | null = null,
): IronicItem => ({
  uuid,
  name,
  serial: null,
  provisionState: "available",
  targetProvisionState: null,
  powerState: "power on",
  maintenance,
  maintenanceReason,
  lastError: null,
  fault: null,
});
const U1 = "00000000-0000-4000-8000-000000000001";
const U2 = "00000000-0000-4000-8000-000000000002";

describe("planMaintenance", () => {
  it("puts a cordoned device's node in maintenance with the cordon reason, matched by node uuid or name", () => {
    const plan = planMaintenance(
      [node(U1, "gpu-1"), node(U2, "gpu-2")],
      [
        { name: "other-name", nodeUuid: U1, reason: "RMA 42" },
        { name: "gpu-2", nodeUuid: null, reason: null },
      ],
    );
    expect(plan).toEqual([
      { uuid: U1, name: "gpu-1", action: "set", reason: `${CORDON_REASON_PREFIX}RMA 42` },
      { uuid: U2, name: "gpu-2", action: "set", reason: `${CORDON_REASON_PREFIX}cordoned in Fleet Manager` },
    ]);
  });

  it("clears only its own maintenance once the device is uncordoned", () => {
    const plan = planMaintenance(
      [node(U1, "gpu-1", true, `${CORDON_REASON_PREFIX}RMA 42`), node(U2, "gpu-2", true, "operator: swapping PSU")],
      [],
    );
    expect(plan).toEqual([{ uuid: U1, name: "gpu-1", action: "clear" }]);
  });

  it("leaves an operator's or Ironic's maintenance alone while cordoned", () => {
    expect(
      planMaintenance(
        [node(U1, "gpu-1", true, "Cleaning failed: bad step")],
        [{ name: "gpu-1", nodeUuid: U1, reason: "RMA" }],
      ),
    ).toEqual([]);
  });

  it("refreshes its own reason when the cordon reason changes, and does nothing when in step", () => {
    const current = node(U1, "gpu-1", true, `${CORDON_REASON_PREFIX}old`);
    expect(planMaintenance([current], [{ name: "gpu-1", nodeUuid: U1, reason: "new" }])).toEqual([
      { uuid: U1, name: "gpu-1", action: "set", reason: `${CORDON_REASON_PREFIX}new` },
    ]);
    expect(
      planMaintenance(
        [node(U1, "gpu-1", true, `${CORDON_REASON_PREFIX}new`)],
        [{ name: "gpu-1", nodeUuid: U1, reason: "new" }],
      ),
    ).toEqual([]);
    expect(planMaintenance([node(U1, "gpu-1")], [])).toEqual([]);
  });
});
