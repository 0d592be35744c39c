import { describe, expect, it } from "vitest";
import { SlurmItemSchema } from "@fm/domain";
import { nodeNameOf, toReflectionItem } from "./nodes.ts";

const drained = {
  name: "gpu002",
  state: "idle",
  stateFlags: ["DRAIN"],
  reason: "operator: bad DIMM",
  partitions: ["gpu", "all"],
};

describe("toReflectionItem", () => {
  it("maps a node to an item the hub accepts, states upper case, naming its device when a prefix is set", () => {
    const item = toReflectionItem(drained, "kef-");
    expect(item).toEqual({
      name: "gpu002",
      device: "kef-gpu002",
      state: "IDLE",
      flags: ["DRAIN"],
      reason: "operator: bad DIMM",
      partitions: ["gpu", "all"],
    });
    expect(SlurmItemSchema.parse(item)).toEqual(item);
    // No prefix: the node's name is the device's, and the item says nothing more.
    expect(toReflectionItem(drained, "")).not.toHaveProperty("device");
  });

  it("clips what the hub would refuse", () => {
    const item = toReflectionItem({ ...drained, reason: "x".repeat(20_000), stateFlags: Array(60).fill("X") }, "");
    expect(item.reason).toHaveLength(10_000);
    expect(SlurmItemSchema.safeParse(item).success).toBe(true);
  });
});

describe("nodeNameOf", () => {
  const device = (name: string, nodeName: string | null = null) => ({ name, slurm: { nodeName } });
  it("prefers the node the hub recorded, else strips the prefix; no node for a name without it", () => {
    expect(nodeNameOf(device("kef-gpu001", "gpu009"), "kef-")).toBe("gpu009");
    expect(nodeNameOf(device("kef-gpu001"), "kef-")).toBe("gpu001");
    expect(nodeNameOf(device("sta-gpu001"), "kef-")).toBeNull();
    expect(nodeNameOf(device("gpu001"), "")).toBe("gpu001");
  });
});
