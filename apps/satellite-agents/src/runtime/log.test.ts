import { describe, expect, it } from "vitest";
import { agentLogger } from "./log.ts";

describe("the agents' log lines", () => {
  it("write the level as a word, so that a search for ERROR finds the errors", () => {
    const lines: Record<string, unknown>[] = [];
    const log = agentLogger("openstack", { LOG_LEVEL: "info", FM_SITE: "keflavik" }, "sys1-ice2", {
      write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>),
    });
    log.info("reflector started");
    log.warn("reconcile step failed");
    log.error({ store: "ironic-nodes-overcloud" }, "reflector cycle failed (1/10)");
    log.debug("not at info");
    expect(lines.map((l) => l.level)).toEqual(["INFO", "WARN", "ERROR"]);
    expect(lines[2]).toMatchObject({
      agent: "openstack",
      site: "keflavik",
      satellite: "sys1-ice2",
      store: "ironic-nodes-overcloud",
    });
  });
});
