import { describe, expect, it } from "vitest";
import {
  IRONIC_ALLOCATED_STATES,
  IRONIC_ENROLLING_STATES,
  IRONIC_FAILED_STATES,
  type DeviceObservations,
} from "./device-observations.ts";
import type { Condition } from "./device-conditions.ts";
import { OPERATIONAL_STATUSES, deriveDeviceStatus, isStale, type OperationalStatus } from "./device-status.ts";
import { NOW, STALE_MS, ago, OLD, ironic, slurm, health, obs, cordon, derive } from "./device-status.fixtures.ts";

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

  it("each of the 32 provision states of Ironic 38.0.0 (ALL_STATES) is in the module's list for its status, and no list names another state", () => {
    const states = Object.keys(IRONIC_PROVISION_STATES);
    expect(states).toHaveLength(32);
    // The module's source lists (device-observations.ts), by the status each gives.
    const lists: Array<[OperationalStatus, readonly string[]]> = [
      ["FAILED", IRONIC_FAILED_STATES],
      ["ENROLLING", IRONIC_ENROLLING_STATES],
      ["ALLOCATED", IRONIC_ALLOCATED_STATES],
      ["AVAILABLE", ["available"]],
    ];
    for (const [state, status] of Object.entries(IRONIC_PROVISION_STATES)) {
      const holding = lists.filter(([, list]) => list.includes(state)).map(([s]) => s);
      // In exactly the list of its status; the verbs (`deleted`, `deploy complete`) in none.
      expect(holding, state).toEqual(status === "UNKNOWN" ? [] : [status]);
      expect(derive(obs({ ironic: ironic({ provisionState: state }) })).operationalStatus, state).toBe(status);
    }
    // And the lists name only Ironic's states, each once: none misspelt, none from elsewhere.
    for (const [status, list] of lists) {
      expect(
        list.filter((state) => !states.includes(state)),
        status,
      ).toEqual([]);
      expect(new Set(list).size, status).toBe(list.length);
    }
    expect(lists.flatMap(([, list]) => list).sort()).toEqual(
      states.filter((s) => IRONIC_PROVISION_STATES[s] !== "UNKNOWN").sort(),
    );
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
