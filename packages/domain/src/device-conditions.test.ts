import { describe, expect, it } from "vitest";
import { CONDITION_TYPES, ConditionSchema, type Condition } from "./device-conditions.ts";
import { NOW, ago, ironic, slurm, health, obs, cordon, derive, cond } from "./device-status.fixtures.ts";

describe("deriveDeviceStatus: conditions", () => {
  it("returns all six types in CONDITION_TYPES order, each valid", () => {
    for (const o of [
      obs(),
      obs({ netbox: { observedAt: null } }),
      obs({ operator: cordon, ironic: ironic(), slurm: slurm("IDLE"), health: health("ok") }),
    ]) {
      const { conditions } = derive(o);
      expect(conditions).toHaveLength(6);
      expect(conditions.map((c) => c.type)).toEqual([...CONDITION_TYPES]);
      for (const c of conditions) {
        expect(ConditionSchema.parse(c)).toEqual(c);
        expect(c.reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
        expect(c.message.length).toBeGreaterThan(0);
      }
    }
  });

  it("marks never-observing sources Unknown/NotObserved", () => {
    const byType = Object.fromEntries(derive(obs({ netbox: { observedAt: null } })).conditions.map((c) => [c.type, c]));
    for (const t of ["Inventoried", "Provisioned", "Schedulable", "Healthy", "Fresh"] as const) {
      expect(byType[t]).toMatchObject({ status: "Unknown", reason: "NotObserved" });
    }
    expect(byType.Provisioned?.message).toContain("Ironic");
    expect(byType.Schedulable?.message).toContain("SLURM");
    expect(byType.Cordoned).toMatchObject({ status: "False", reason: "NotCordoned" });
  });

  it("Inventoried names the NetBox status, and is False when NetBox stopped listing the device", () => {
    expect(cond(obs(), "Inventoried")).toMatchObject({
      status: "True",
      reason: "NetBoxStatusActive",
      message: "NetBox status is 'active'",
    });
    expect(cond(obs({ netbox: { missing: true } }), "Inventoried")).toMatchObject({
      status: "False",
      reason: "MissingFromNetBox",
    });
  });

  it("Provisioned reports Ironic's state, last error and fault", () => {
    const failed = obs({ ironic: ironic({ provisionState: "clean failed", lastError: "BMC timed out" }) });
    expect(cond(failed, "Provisioned")).toMatchObject({
      status: "False",
      reason: "CleanFailed",
      message: "Ironic provision state is 'clean failed': BMC timed out",
    });
    expect(cond(obs({ ironic: ironic({ provisionState: "active" }) }), "Provisioned")).toMatchObject({
      status: "True",
      reason: "ProvisionStateActive",
    });
    expect(
      cond(obs({ ironic: ironic({ provisionState: "deploying", targetProvisionState: "active" }) }), "Provisioned"),
    ).toMatchObject({
      status: "False",
      reason: "ProvisionStateDeploying",
      message: "Ironic provision state is 'deploying' (target 'active')",
    });
    expect(cond(obs({ ironic: ironic({ provisionState: "error" }) }), "Provisioned")).toMatchObject({
      status: "False",
      reason: "ProvisionStateError",
    });
    expect(
      cond(
        obs({ ironic: ironic({ fault: "power failure", maintenance: true, maintenanceReason: "IPMI unreachable" }) }),
        "Provisioned",
      ),
    ).toMatchObject({
      status: "False",
      reason: "IronicFault",
      message: "Ironic reports fault 'power failure': IPMI unreachable",
    });
    expect(cond(obs({ ironic: ironic({ provisionState: null }) }), "Provisioned")).toMatchObject({
      status: "Unknown",
      reason: "ProvisionStateUnknown",
    });
  });

  it("Schedulable reflects Ironic maintenance and SLURM state", () => {
    expect(
      cond(
        obs({ ironic: ironic({ maintenance: true, maintenanceReason: "fan swap" }), slurm: slurm("IDLE") }),
        "Schedulable",
      ),
    ).toMatchObject({
      status: "False",
      reason: "MaintenanceSet",
      message: "Ironic maintenance is set: fan swap",
    });
    expect(cond(obs({ slurm: slurm("IDLE", ["DRAIN"], { reason: "bad gpu" }) }), "Schedulable")).toMatchObject({
      status: "False",
      reason: "SlurmDrain",
      message: "SLURM node state is 'IDLE+DRAIN': bad gpu",
    });
    expect(cond(obs({ slurm: slurm("MIXED") }), "Schedulable")).toMatchObject({ status: "True", reason: "SlurmMixed" });
    expect(cond(obs({ slurm: slurm("UNKNOWN") }), "Schedulable")).toMatchObject({
      status: "Unknown",
      reason: "SlurmUnknown",
    });
    expect(cond(obs({ slurm: slurm(null) }), "Schedulable")).toMatchObject({
      status: "Unknown",
      reason: "SlurmStateUnknown",
    });
  });

  it("Healthy maps the checker status and lists failing checks", () => {
    const h = health("critical", {
      conditions: [
        { name: "gpu0-ecc", status: "critical", message: "3 uncorrectable" },
        { name: "psu", status: "ok" },
      ],
    });
    expect(cond(obs({ health: h }), "Healthy")).toMatchObject({
      status: "False",
      reason: "HealthCritical",
      message: "Health checker reports 'critical': gpu0-ecc=critical (3 uncorrectable)",
    });
    expect(cond(obs({ health: health("ok") }), "Healthy")).toMatchObject({ status: "True", reason: "HealthOk" });
    expect(cond(obs({ health: health("warning") }), "Healthy")).toMatchObject({
      status: "False",
      reason: "HealthWarning",
    });
    expect(cond(obs({ health: health("unknown") }), "Healthy")).toMatchObject({
      status: "Unknown",
      reason: "HealthUnknown",
    });
  });

  it("Cordoned carries the operator's reason", () => {
    expect(cond(obs({ operator: cordon }), "Cordoned")).toMatchObject({
      status: "True",
      reason: "OperatorCordon",
      message: "Cordoned by an operator: RMA ticket 42",
    });
  });

  it("Fresh is False naming each stale source and its age in seconds", () => {
    const o = obs({
      ironic: ironic({ observedAt: ago(3_600_000) }),
      slurm: slurm("IDLE", [], { observedAt: ago(900_500) }),
    });
    expect(cond(o, "Fresh")).toMatchObject({
      status: "False",
      reason: "SourceStale",
      message: "Ironic last observed 3600s ago, SLURM last observed 900s ago (limit 600s)",
    });
    expect(cond(obs({ ironic: ironic() }), "Fresh")).toMatchObject({ status: "True", reason: "AllSourcesFresh" });
  });

  it("keeps lastTransitionTime while a status is unchanged and resets it when it changes", () => {
    const earlier = "2025-05-01T00:00:00.000Z";
    const previous: Condition[] = derive(obs({ ironic: ironic(), slurm: slurm("IDLE") })).conditions.map((c) => ({
      ...c,
      lastTransitionTime: earlier,
    }));
    // Ironic drops into maintenance: Schedulable flips True → False; Provisioned stays True
    // (its reason is unchanged too, but a reason change alone would not move the time either).
    const next = derive(obs({ ironic: ironic({ maintenance: true }), slurm: slurm("IDLE") }), previous);
    const at = (t: Condition["type"]) => next.conditions.find((c) => c.type === t)?.lastTransitionTime;
    expect(at("Provisioned")).toBe(earlier);
    expect(at("Healthy")).toBe(earlier);
    expect(at("Schedulable")).toBe(NOW.toISOString());
  });

  it("keeps lastTransitionTime when only the reason changes, and uses now without a previous entry", () => {
    const prev: Condition[] = [
      {
        type: "Provisioned",
        status: "False",
        reason: "ProvisionStateCleaning",
        message: "x",
        lastTransitionTime: "2025-05-01T00:00:00.000Z",
      },
    ];
    const next = derive(obs({ ironic: ironic({ provisionState: "deploying" }) }), prev);
    expect(next.conditions.find((c) => c.type === "Provisioned")).toMatchObject({
      reason: "ProvisionStateDeploying",
      lastTransitionTime: "2025-05-01T00:00:00.000Z",
    });
    expect(next.conditions.find((c) => c.type === "Healthy")?.lastTransitionTime).toBe(NOW.toISOString());
    for (const previous of [null, undefined, []]) {
      expect(derive(obs(), previous).conditions.every((c) => c.lastTransitionTime === NOW.toISOString())).toBe(true);
    }
  });
});
