import { describe, expect, it } from "vitest";
import { agentClientId, agentMayWriteSource, agentServesSite } from "./identity.ts";

describe("agent authorization", () => {
  const agent = { satellite: "sys1-ice2", kind: "openstack" as const, siteIds: ["site-a"] };
  it.each([
    ["site-a", "ironic-overcloud", true],
    ["site-a", "ironic-undercloud", true],
    ["site-a", "slurm", false],
    ["site-a", "netbox", false],
    ["site-b", "ironic-overcloud", false],
  ])("openstack agent at %s writing %s: %s", (site, source, allowed) => {
    expect(agentMayWriteSource(agent, site, source)).toBe(allowed);
  });
  it("workflow agents write no source but serve their sites", () => {
    const wf = { satellite: "s", kind: "workflow" as const, siteIds: ["site-a"] };
    expect(agentMayWriteSource(wf, "site-a", "netbox")).toBe(false);
    expect(agentServesSite(wf, "site-a")).toBe(true);
    expect(agentServesSite(wf, "site-b")).toBe(false);
  });
  it("templates client ids from the satellite name", () => {
    expect(agentClientId("openstack", "sys1-ice2")).toBe("ironic-agent-sys1-ice2");
    expect(agentClientId("temporal-worker", "sys1-ice2")).toBe("temporal-worker-sys1-ice2");
    expect(agentClientId("health-status", "x")).toBe("health-status-agent-x");
  });
});
