import { describe, expect, it } from "vitest";
import {
  CONDITION_TYPES,
  ConditionSchema,
  OPERATIONAL_STATUSES,
  deriveDeviceStatus,
  isStale,
  type Condition,
  type DeviceObservations,
  type OperationalStatus,
} from "./device-status.ts";

const NOW = new Date("2025-06-01T12:00:00.000Z");
const STALE_MS = 10 * 60_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const RECENT = ago(60_000);
const OLD = ago(STALE_MS + 1);

type Ironic = NonNullable<DeviceObservations["ironic"]>;
type Slurm = NonNullable<DeviceObservations["slurm"]>;
type Health = NonNullable<DeviceObservations["health"]>;

const ironic = (over: Partial<Ironic> = {}): Ironic => ({
  provisionState: "available",
  targetProvisionState: null,
  powerState: "power off",
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
  observedAt: RECENT,
  ...over,
});
const slurm = (state: string | null, flags: string[] = [], over: Partial<Slurm> = {}): Slurm => ({
  state,
  flags,
  reason: null,
  observedAt: RECENT,
  ...over,
});
const health = (status: Health["status"], over: Partial<Health> = {}): Health => ({
  status,
  conditions: [],
  observedAt: RECENT,
  ...over,
});

/** Baseline: NetBox says active and nothing else has observed the device. */
function obs(
  over: Partial<Omit<DeviceObservations, "netbox">> & { netbox?: Partial<DeviceObservations["netbox"]> } = {},
): DeviceObservations {
  const { netbox, ...rest } = over;
  return {
    netbox: { status: "active", missing: false, observedAt: RECENT, ...netbox },
    ironic: null,
    slurm: null,
    health: null,
    operator: { cordoned: false, cordonReason: null },
    activeJobKind: null,
    ...rest,
  };
}
const cordon = { cordoned: true, cordonReason: "RMA ticket 42" };

const derive = (o: DeviceObservations, previous?: Condition[] | null) =>
  deriveDeviceStatus(o, { now: NOW, staleAfterMs: STALE_MS, previous });
const cond = (o: DeviceObservations, type: Condition["type"]) => derive(o).conditions.find((c) => c.type === type);

/**
 * Every provision state of Ironic's state machine, listed from Ironic and not from the module
 * under test (openstack/ironic, tag 38.0.0, ironic/common/states.py: ALL_STATES), with the
 * status a device in that state alone must have (NetBox active, no SLURM, health or job).
 * A state the module does not place falls through to UNKNOWN, so a state missing from its
 * lists fails here. `deleted` and `deploy complete` are verbs and targets, not states a node
 * rests in: nothing to derive from them.
 */
const IRONIC_PROVISION_STATES: Record<string, OperationalStatus> = {
  enroll: "ENROLLING",
  verifying: "ENROLLING",
  manageable: "ENROLLING",
  inspecting: "ENROLLING",
  "inspect wait": "ENROLLING",
  "inspect failed": "FAILED",
  cleaning: "ENROLLING",
  "clean wait": "ENROLLING",
  "clean hold": "ENROLLING",
  "clean failed": "FAILED",
  available: "AVAILABLE",
  deploying: "ALLOCATED",
  "wait call-back": "ALLOCATED",
  "deploy hold": "ALLOCATED",
  "deploy failed": "FAILED",
  "deploy complete": "UNKNOWN",
  active: "ALLOCATED",
  deleting: "ALLOCATED",
  deleted: "UNKNOWN",
  error: "FAILED",
  adopting: "ENROLLING",
  "adopt failed": "FAILED",
  rescuing: "ALLOCATED",
  "rescue wait": "ALLOCATED",
  rescue: "ALLOCATED",
  "rescue failed": "FAILED",
  unrescuing: "ALLOCATED",
  "unrescue failed": "FAILED",
  servicing: "ALLOCATED",
  "service wait": "ALLOCATED",
  "service hold": "ALLOCATED",
  "service failed": "FAILED",
};

const CASES: [name: string, observations: DeviceObservations, expected: OperationalStatus][] = [
  // 1. QUARANTINED
  ["cordoned alone", obs({ operator: cordon }), "QUARANTINED"],
  [
    "cordoned + failed → QUARANTINED",
    obs({ operator: cordon, ironic: ironic({ fault: "power failure" }) }),
    "QUARANTINED",
  ],
  [
    "cordoned + stale → QUARANTINED",
    obs({ operator: cordon, slurm: slurm("IDLE", [], { observedAt: OLD }) }),
    "QUARANTINED",
  ],
  ["cordoned + available → QUARANTINED", obs({ operator: cordon, ironic: ironic() }), "QUARANTINED"],
  // 2. STALE
  ["Ironic observed too long ago", obs({ ironic: ironic({ observedAt: OLD }) }), "STALE"],
  ["NetBox observed too long ago", obs({ netbox: { observedAt: OLD } }), "STALE"],
  [
    "stale + failed → STALE",
    obs({ ironic: ironic({ provisionState: "clean failed" }), health: health("critical", { observedAt: OLD }) }),
    "STALE",
  ],
  ["stale SLURM + allocated → STALE", obs({ slurm: slurm("ALLOCATED", [], { observedAt: OLD }) }), "STALE"],
  // 3. FAILED
  ["NetBox failed", obs({ netbox: { status: "failed" } }), "FAILED"],
  ["Ironic fault", obs({ ironic: ironic({ fault: "power failure", maintenance: true }) }), "FAILED"],
  ["SLURM FAIL state", obs({ slurm: slurm("FAIL") }), "FAILED"],
  ["SLURM FAIL flag", obs({ slurm: slurm("ALLOCATED", ["FAIL"]) }), "FAILED"],
  ["health critical", obs({ ironic: ironic(), health: health("critical") }), "FAILED"],
  [
    "failed + maintenance → FAILED",
    obs({ ironic: ironic({ provisionState: "deploy failed", maintenance: true }) }),
    "FAILED",
  ],
  [
    "failed + burn-in → FAILED",
    obs({ ironic: ironic({ provisionState: "clean failed" }), activeJobKind: "BURN_IN" }),
    "FAILED",
  ],
  ["failed + SLURM drain → FAILED", obs({ health: health("critical"), slurm: slurm("IDLE", ["DRAIN"]) }), "FAILED"],
  // 4. IMPAIRED
  ["Ironic maintenance", obs({ ironic: ironic({ maintenance: true, maintenanceReason: "fan swap" }) }), "IMPAIRED"],
  ["SLURM DOWN", obs({ slurm: slurm("DOWN") }), "IMPAIRED"],
  ["SLURM DRAIN state", obs({ slurm: slurm("DRAIN") }), "IMPAIRED"],
  ["SLURM DRAINING state", obs({ slurm: slurm("DRAINING") }), "IMPAIRED"],
  ["SLURM DRAIN flag", obs({ ironic: ironic(), slurm: slurm("IDLE", ["DRAIN"]) }), "IMPAIRED"],
  ["SLURM NOT_RESPONDING flag", obs({ slurm: slurm("IDLE", ["NOT_RESPONDING"]) }), "IMPAIRED"],
  ["health warning", obs({ ironic: ironic(), health: health("warning") }), "IMPAIRED"],
  ["NetBox offline", obs({ netbox: { status: "offline" } }), "IMPAIRED"],
  ["NetBox missing", obs({ netbox: { missing: true }, ironic: ironic() }), "IMPAIRED"],
  ["impaired + burn-in → IMPAIRED", obs({ slurm: slurm("DOWN"), activeJobKind: "BURN_IN" }), "IMPAIRED"],
  [
    "impaired + allocated → IMPAIRED",
    obs({ ironic: ironic({ provisionState: "active" }), slurm: slurm("ALLOCATED", ["DRAIN"]) }),
    "IMPAIRED",
  ],
  // 5. BURN_IN
  ["burn-in job", obs({ ironic: ironic({ provisionState: "manageable" }), activeJobKind: "BURN_IN" }), "BURN_IN"],
  [
    "burn-in + SLURM allocated → BURN_IN",
    obs({ ironic: ironic({ provisionState: "active" }), slurm: slurm("ALLOCATED"), activeJobKind: "BURN_IN" }),
    "BURN_IN",
  ],
  // 6. ENROLLING
  ["enrol job", obs({ ironic: ironic(), activeJobKind: "ENROL" }), "ENROLLING"],
  ["NetBox planned, no Ironic", obs({ netbox: { status: "planned" } }), "ENROLLING"],
  ["NetBox staged, no Ironic", obs({ netbox: { status: "staged" } }), "ENROLLING"],
  [
    "NetBox inventory, no Ironic, SLURM idle",
    obs({ netbox: { status: "inventory" }, slurm: slurm("IDLE") }),
    "ENROLLING",
  ],
  [
    "enrolling Ironic + SLURM allocated → ENROLLING",
    obs({ ironic: ironic({ provisionState: "cleaning" }), slurm: slurm("ALLOCATED") }),
    "ENROLLING",
  ],
  // 7. ALLOCATED
  ["SLURM ALLOCATED", obs({ slurm: slurm("ALLOCATED") }), "ALLOCATED"],
  ["SLURM MIXED", obs({ slurm: slurm("MIXED") }), "ALLOCATED"],
  ["SLURM COMPLETING", obs({ slurm: slurm("COMPLETING") }), "ALLOCATED"],
  ["Ironic available + SLURM ALLOCATED → ALLOCATED", obs({ ironic: ironic(), slurm: slurm("ALLOCATED") }), "ALLOCATED"],
  // 8. AVAILABLE
  ["Ironic available, no SLURM", obs({ ironic: ironic() }), "AVAILABLE"],
  ["Ironic available + SLURM IDLE", obs({ ironic: ironic(), slurm: slurm("IDLE", ["RESERVED"]) }), "AVAILABLE"],
  ["Ironic available + health ok", obs({ ironic: ironic(), health: health("ok") }), "AVAILABLE"],
  ["NetBox active + SLURM IDLE, no Ironic", obs({ slurm: slurm("IDLE") }), "AVAILABLE"],
  [
    "NetBox planned but Ironic available (Ironic decides)",
    obs({ netbox: { status: "planned" }, ironic: ironic() }),
    "AVAILABLE",
  ],
  ["other job kinds do not change status", obs({ ironic: ironic(), activeJobKind: "REPAIR" }), "AVAILABLE"],
  ["NetBox never observed, Ironic available", obs({ netbox: { observedAt: null }, ironic: ironic() }), "AVAILABLE"],
  // 9. UNKNOWN
  ["NetBox active alone", obs(), "UNKNOWN"],
  ["nothing observed", obs({ netbox: { observedAt: null } }), "UNKNOWN"],
  ["NetBox decommissioning alone", obs({ netbox: { status: "decommissioning" } }), "UNKNOWN"],
  ["decommissioning blocks AVAILABLE", obs({ netbox: { status: "decommissioning" }, ironic: ironic() }), "UNKNOWN"],
  ["Ironic available + SLURM UNKNOWN", obs({ ironic: ironic(), slurm: slurm("UNKNOWN") }), "UNKNOWN"],
  ["Ironic available + SLURM without state", obs({ ironic: ironic(), slurm: slurm(null) }), "UNKNOWN"],
  [
    "unrecognised Ironic state",
    obs({ ironic: ironic({ provisionState: "frobnicating" }), slurm: slurm("IDLE") }),
    "UNKNOWN",
  ],
  ["Ironic without provision state", obs({ ironic: ironic({ provisionState: null }) }), "UNKNOWN"],
  ["unobserved NetBox 'failed' is ignored", obs({ netbox: { status: "failed", observedAt: null } }), "UNKNOWN"],
  ["unobserved NetBox 'planned' is not ENROLLING", obs({ netbox: { status: "planned", observedAt: null } }), "UNKNOWN"],
  ["health unknown adds nothing", obs({ health: health("unknown") }), "UNKNOWN"],
  // Each of Ironic's provision states alone.
  ...Object.entries(IRONIC_PROVISION_STATES).map(([state, status]): [string, DeviceObservations, OperationalStatus] => [
    `Ironic '${state}' alone`,
    obs({ ironic: ironic({ provisionState: state }) }),
    status,
  ]),
];

describe("deriveDeviceStatus: operationalStatus", () => {
  it.each(CASES)("%s → %s", (_name, o, expected) => {
    expect(derive(o).operationalStatus).toBe(expected);
  });

  it("the table covers every status", () => {
    expect(new Set(CASES.map((c) => c[2]))).toEqual(new Set(OPERATIONAL_STATUSES));
  });

  it("the table lists all 32 provision states of Ironic 38.0.0 (ALL_STATES)", () => {
    expect(Object.keys(IRONIC_PROVISION_STATES)).toHaveLength(32);
  });

  it("staleAfterMs: Infinity gives the status ignoring staleness (what the DB stores)", () => {
    const o = obs({ ironic: ironic({ provisionState: "active", observedAt: ago(86_400_000) }) });
    expect(derive(o).operationalStatus).toBe("STALE");
    expect(deriveDeviceStatus(o, { now: NOW, staleAfterMs: Infinity }).operationalStatus).toBe("ALLOCATED");
  });

  it("is pure: same inputs give the same output and inputs are not mutated", () => {
    const o = obs({ ironic: ironic({ provisionState: "clean failed" }), slurm: slurm("DOWN", ["NOT_RESPONDING"]) });
    const snapshot = structuredClone(o);
    const previous: Condition[] = derive(o).conditions.map((c) => Object.freeze({ ...c }));
    Object.freeze(previous);
    expect(derive(o, previous)).toEqual(derive(o, previous));
    expect(o).toEqual(snapshot);
  });
});

describe("deriveDeviceStatus: conditions", () => {
  it("returns all six types in CONDITION_TYPES order, each valid", () => {
    for (const o of [
      obs(),
      obs({ netbox: { observedAt: null } }),
      obs({ operator: cordon, ironic: ironic(), slurm: slurm("IDLE"), health: health("ok") }),
    ]) {
      const { conditions } = derive(o);
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

describe("isStale", () => {
  it("is not stale exactly at the threshold, and stale one millisecond past it", () => {
    expect(isStale(obs({ ironic: ironic({ observedAt: ago(STALE_MS) }) }), NOW, STALE_MS)).toBe(false);
    expect(isStale(obs({ ironic: ironic({ observedAt: ago(STALE_MS + 1) }) }), NOW, STALE_MS)).toBe(true);
  });

  it("ignores sources that never observed the device", () => {
    expect(isStale(obs({ netbox: { observedAt: null } }), NOW, STALE_MS)).toBe(false);
    expect(isStale(obs({ netbox: { observedAt: null }, slurm: slurm("IDLE") }), NOW, STALE_MS)).toBe(false);
    expect(
      isStale(obs({ netbox: { observedAt: null }, slurm: slurm("IDLE", [], { observedAt: OLD }) }), NOW, STALE_MS),
    ).toBe(true);
  });

  it.each([
    ["NetBox", obs({ netbox: { observedAt: OLD } })],
    ["Ironic", obs({ ironic: ironic({ observedAt: OLD }) })],
    ["SLURM", obs({ slurm: slurm("IDLE", [], { observedAt: OLD }) })],
    ["health checker", obs({ health: health("ok", { observedAt: OLD }) })],
  ])("any one stale source (%s) makes the device stale", (_source, o) => {
    expect(isStale(o, NOW, STALE_MS)).toBe(true);
  });

  it("treats future timestamps (clock skew) as fresh and Infinity as never stale", () => {
    expect(isStale(obs({ ironic: ironic({ observedAt: new Date(NOW.getTime() + 60_000) }) }), NOW, STALE_MS)).toBe(
      false,
    );
    expect(isStale(obs({ netbox: { observedAt: new Date(0) } }), NOW, Infinity)).toBe(false);
  });
});
