import { describe, expect, it } from "vitest";
import { JOB_KINDS } from "@fm/domain";
import { describeParams, parseJobKind, parseJobParams } from "./job-params.ts";

describe("parseJobKind", () => {
  it("accepts any case and dashes", () => {
    expect(parseJobKind("burn-in")).toBe("BURN_IN");
    expect(parseJobKind("Reimage")).toBe("REIMAGE");
    for (const kind of JOB_KINDS) {
      const dashed = kind.replace(/_/g, "-");
      const mixed = [...dashed].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join("");
      for (const spelled of [kind, kind.toLowerCase(), dashed, dashed.toLowerCase(), mixed])
        expect(parseJobKind(spelled), spelled).toBe(kind);
    }
  });
  it("refuses an unknown kind, listing the kinds", () => {
    expect(() => parseJobKind("explode")).toThrow(/not a job kind/);
  });
});

describe("parseJobParams", () => {
  it("reads values as JSON when they are JSON, else as text", () => {
    expect(parseJobParams("BURN_IN", undefined, ["durationMinutes=30", "partition=gpu"])).toEqual({
      durationMinutes: 30,
      partition: "gpu",
    });
    expect(parseJobParams("ENROL", undefined, ['tags=["a","b"]', "configureDhcp=true"])).toEqual({
      tags: ["a", "b"],
      configureDhcp: true,
    });
  });
  it("merges --params with --param, the --param winning", () => {
    expect(parseJobParams("REIMAGE", '{"image":"old"}', ["image=ubuntu-24.04"])).toEqual({ image: "ubuntu-24.04" });
  });
  it("checks against the kind's schema: required, ranges, unknown params", () => {
    expect(() => parseJobParams("REIMAGE", undefined, [])).toThrow(/invalid params for REIMAGE: image/);
    expect(() => parseJobParams("BURN_IN", undefined, ["durationMinutes=0"])).toThrow(/durationMinutes/);
    expect(() => parseJobParams("RELEASE", undefined, ["force=true"])).toThrow(/unknown param force/);
    expect(() => parseJobParams("NODE_SWAP", undefined, ["spareDeviceId=kef-1"])).toThrow(/spareDeviceId/);
    expect(() => parseJobParams("IMAGE_NODE", undefined, ["image=https://images.example/u.qcow2"])).toThrow(
      /invalid params for IMAGE_NODE: osHash: an image URL needs its digest/,
    );
    expect(
      parseJobParams("IMAGE_NODE", undefined, [
        "image=https://images.example/u.qcow2",
        `osHash={"algo":"sha256","value":"${"a".repeat(64)}"}`,
      ]),
    ).toEqual({ image: "https://images.example/u.qcow2", osHash: { algo: "sha256", value: "a".repeat(64) } });
    expect(describeParams("IMAGE_NODE")).toBe("IMAGE_NODE takes: image, osHash?, userData?");
  });
  it("refuses what is not key=value or not a JSON object", () => {
    expect(() => parseJobParams("RELEASE", undefined, ["=x"])).toThrow(/not key=value/);
    expect(() => parseJobParams("RELEASE", "[1]")).toThrow(/must be a JSON object/);
    expect(() => parseJobParams("RELEASE", "{")).toThrow(/not JSON/);
  });
  it("describes each kind's params, the optional ones marked", () => {
    expect(describeParams("REPAIR")).toBe("REPAIR takes: ticket, description?, burnInMinutes?, partition?");
    expect(describeParams("RELEASE")).toBe("RELEASE takes: burnInOverride?");
    expect(describeParams("TEARDOWN")).toBe("TEARDOWN takes: reason?");
  });
});
