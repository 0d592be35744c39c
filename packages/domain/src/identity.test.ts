import { describe, expect, it } from "vitest";
import { agentClientId, agentMayWriteSource, agentServesSite, expandScopes, narrowScopes } from "./identity.ts";

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

describe("a person's scopes narrowed by what their token asked for", () => {
  it.each([
    ["admin asks for read", ["fleet.admin"], "openid fleet.read", ["fleet.read"]],
    ["admin asks for operate", ["fleet.admin"], "openid email fleet.operate", ["fleet.operate"]],
    [
      "admin asks for everything",
      ["fleet.admin"],
      "fleet.admin fleet.operate fleet.read",
      ["fleet.admin", "fleet.operate", "fleet.read"],
    ],
    ["reader asks for admin: gains nothing", ["fleet.read"], "openid fleet.admin", []],
    ["reader asks for read and admin", ["fleet.read"], "fleet.read fleet.admin", ["fleet.read"]],
    ["operator from two groups asks for read", ["fleet.read", "fleet.operate"], "fleet.read", ["fleet.read"]],
    [
      "no fleet scope asked: the mapping's",
      ["fleet.operate", "fleet.read"],
      "openid email profile",
      ["fleet.operate", "fleet.read"],
    ],
    ["no scope claim: the mapping's", ["fleet.admin"], undefined, ["fleet.admin"]],
    ["scope claim as a list (scp style)", ["fleet.admin"], ["openid", "fleet.read"], ["fleet.read"]],
    ["a non-string claim is no request", ["fleet.operate"], 42, ["fleet.operate"]],
    ["nothing mapped stays nothing", [], "fleet.read", []],
    ["repeated scopes once", ["fleet.admin"], "fleet.read  fleet.read", ["fleet.read"]],
  ])("%s", (_what, mapped, claim, effective) => {
    expect(narrowScopes(mapped, claim)).toEqual(effective);
  });

  it("writes out the fleet scopes a granted scope includes", () => {
    expect([...expandScopes(["fleet.operate"])].sort()).toEqual(["fleet.operate", "fleet.read"]);
    expect([...expandScopes(["agent:netbox", "fleet.read"])].sort()).toEqual(["agent:netbox", "fleet.read"]);
  });
});
