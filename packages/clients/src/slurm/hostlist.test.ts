import { describe, expect, it } from "vitest";
import { expandHostlist } from "./hostlist.ts";

describe("expandHostlist", () => {
  it("expands Slurm node ranges as squeue prints them", () => {
    expect(expandHostlist("gpu002")).toEqual(["gpu002"]);
    expect(expandHostlist("gpu[001-003,007],login1")).toEqual(["gpu001", "gpu002", "gpu003", "gpu007", "login1"]);
    expect(expandHostlist("rack[1-2]-n[01-02]")).toEqual(["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]);
  });
});
