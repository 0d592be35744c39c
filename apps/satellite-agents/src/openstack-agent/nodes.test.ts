import { describe, expect, it } from "vitest";
import { IronicItemSchema } from "@fm/domain";
import type { IronicNode } from "@fm/clients";
import { toReflectionItem } from "./nodes.ts";

describe("toReflectionItem", () => {
  it("maps Ironic's node fields to a reflection item the hub accepts", () => {
    const node = {
      uuid: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123",
      name: "gpu-node-001",
      provision_state: "clean failed",
      target_provision_state: null,
      power_state: null,
      maintenance: true,
      maintenance_reason: "Cleaning failed",
      last_error: "x".repeat(20_000),
      fault: "clean failure",
      extra: { serial: "SN-1" },
      properties: {},
    } as unknown as IronicNode;
    const item = toReflectionItem(node);
    expect(item).toMatchObject({
      uuid: node.uuid,
      name: "gpu-node-001",
      serial: "SN-1",
      provisionState: "clean failed",
      maintenance: true,
      fault: "clean failure",
    });
    expect(item.lastError).toHaveLength(10_000);
    expect(IronicItemSchema.parse(item)).toEqual(item);
  });
});
