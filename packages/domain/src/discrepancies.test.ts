import { describe, expect, it } from "vitest";
import { deviceDiscrepancies, unmatchedDiscrepancy, type DiscrepancyDevice } from "./discrepancies.ts";
import { siteReporting, siteSources } from "./sites.ts";

const SEEN = new Date("2026-01-01T00:00:00Z");
/** A GPU node NetBox lists as active, Ironic `active`, SLURM idle, healthy, not cordoned: no disagreement. */
const agreeing: DiscrepancyDevice = {
  deviceClass: "GPU_COMPUTE",
  netboxStatus: "active",
  netboxMissing: false,
  netboxObservedAt: SEEN,
  ironicNodeUuid: "0190a000-0000-7000-8000-000000000001",
  ironicProvisionState: "active",
  ironicObservedAt: SEEN,
  slurmState: "IDLE",
  slurmStateFlags: [],
  slurmReason: null,
  slurmObservedAt: SEEN,
  healthStatus: "ok",
  cordoned: false,
};
const kinds = (d: Partial<DiscrepancyDevice>, ironicReports = true) =>
  deviceDiscrepancies({ ...agreeing, ...d }, { ironicReports }).map((f) => f.kind);

describe("deviceDiscrepancies", () => {
  it.each<[string, Partial<DiscrepancyDevice>, boolean, string[]]>([
    ["sources agree", {}, true, []],
    [
      "active, no Ironic node",
      { ironicObservedAt: null, ironicProvisionState: null },
      true,
      ["netbox_active_without_ironic_node"],
    ],
    ["… but the site's Ironic never reported", { ironicObservedAt: null }, false, []],
    ["… but a switch", { ironicObservedAt: null, deviceClass: "NETWORK" }, true, []],
    ["… but NetBox no longer lists it", { ironicObservedAt: null, netboxMissing: true }, true, []],
    ["… but NetBox has not observed it", { ironicObservedAt: null, netboxObservedAt: null }, true, []],
    [
      "available, staged",
      { netboxStatus: "staged", ironicProvisionState: "available" },
      true,
      ["ironic_available_netbox_staged"],
    ],
    ["active, staged", { netboxStatus: "staged", ironicProvisionState: "active" }, true, []],
    ["drained by hand", { slurmStateFlags: ["DRAIN"], slurmReason: "dimm" }, true, ["slurm_drained_externally"]],
    ["DRAINED base state", { slurmState: "DRAINED", slurmReason: null }, true, ["slurm_drained_externally"]],
    ["drained by hand, cordoned", { slurmStateFlags: ["DRAIN"], slurmReason: "dimm", cordoned: true }, true, []],
    ["drained by the hub", { slurmStateFlags: ["DRAIN"], slurmReason: "fleet-manager cordon: xid" }, true, []],
    ["SLURM down, not drained", { slurmState: "DOWN", slurmReason: "not responding" }, true, []],
    ["critical, not cordoned", { healthStatus: "critical" }, true, ["health_critical_not_cordoned"]],
    ["critical, cordoned", { healthStatus: "critical", cordoned: true }, true, []],
    ["warning", { healthStatus: "warning" }, true, []],
  ])("%s", (_name, d, ironicReports, expected) => {
    expect(kinds(d, ironicReports)).toEqual(expected);
  });

  it("names the values each source reports", () => {
    expect(
      deviceDiscrepancies({ ...agreeing, slurmStateFlags: ["DRAIN"], slurmReason: "dimm" }, { ironicReports: true }),
    ).toEqual([
      {
        kind: "slurm_drained_externally",
        observed: { "slurm.state": "IDLE+DRAIN", "slurm.reason": "dimm", "hub.cordoned": "false" },
      },
    ]);
  });

  it("keys an unmatched item by its source", () => {
    expect(unmatchedDiscrepancy("ironic-undercloud", "n1")).toEqual({
      kind: "ironic_node_unmatched",
      subject: "ironic-undercloud:n1",
      observed: { "ironic-undercloud.node": "n1", "hub.device": null },
    });
    expect(unmatchedDiscrepancy("slurm", "n1").kind).toBe("slurm_node_unmatched");
  });
});

describe("site silence", () => {
  const now = new Date("2026-01-01T01:00:00Z");
  const window = 15 * 60_000;
  const pushed = (source: string, minutesAgo: number) => ({
    source,
    appliedAt: new Date(now.getTime() - minutesAgo * 60_000),
  });

  it("is silent strictly after the window, never negative, sorted by source", () => {
    // At the window exactly: not silent; one millisecond after it (still 900 whole seconds): silent.
    const sources = siteSources(
      [pushed("slurm", 15), pushed("prometheus", 15 + 1 / 60_000), pushed("netbox", 16), pushed("health", -1)],
      now,
      window,
    );
    expect(sources.map((s) => [s.source, s.silenceSeconds, s.silent])).toEqual([
      ["health", 0, false],
      ["netbox", 960, true],
      ["prometheus", 900, true],
      ["slurm", 900, false],
    ]);
  });

  it.each([
    [[], "Unknown", "NoReflections"],
    [[pushed("slurm", 1)], "True", "AllSourcesReporting"],
    [[pushed("slurm", 1), pushed("netbox", 20)], "False", "SourceSilent"],
  ] as const)("Reporting for %j is %s", (pushes, status, reason) => {
    const condition = siteReporting(siteSources([...pushes], now, window), window);
    expect(condition).toMatchObject({ type: "Reporting", status, reason });
    if (status === "False") expect(condition.message).toBe("netbox silent for 1200s (window 900s)");
  });
});
