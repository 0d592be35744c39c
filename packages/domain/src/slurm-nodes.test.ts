import { describe, expect, it } from "vitest";
import { isSlurmNodeRegistered, slurmNodeNeedsResume } from "./slurm-nodes.ts";

describe("a node SLURM adoption waits for and resumes", () => {
  it.each([
    // state, flags (as slurmrestd v0.0.38 and v0.0.40+ report them), registered, needs a resume
    ["unknown", [], false, false],
    ["unknown", ["DRAIN", "NOT_RESPONDING"], false, true],
    ["down", ["NOT_RESPONDING"], false, true],
    ["future", [], false, false],
    ["idle", ["DRAIN"], true, true],
    ["IDLE", ["DRAIN"], true, true],
    ["drained", [], true, true],
    ["down", [], true, true],
    ["idle", [], true, false],
    ["mixed", [], true, false],
    [null, [], false, false],
  ] as const)("%s %j: registered %s, needs a resume %s", (state, flags, registered, resume) => {
    expect(isSlurmNodeRegistered(state, flags)).toBe(registered);
    expect(slurmNodeNeedsResume(state, flags)).toBe(resume);
  });
});
