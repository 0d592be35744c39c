import { describe, expect, it } from "vitest";
import { DEVICE_CLASSES, ironicInstanceFor, ironicResourceClassFor, type DeviceClass } from "./inventory.ts";

describe("ironicResourceClassFor", () => {
  const table: [DeviceClass, string | null][] = [
    ["GPU_COMPUTE", "GPU_COMPUTE"],
    ["CPU_BAREMETAL", "CPU_BAREMETAL"],
    ["CPU_HYPERVISOR", "CPU_HYPERVISOR"],
    ["NETWORK", null],
    ["STORAGE", null],
    ["OTHER", null],
  ];
  it.each(table)("%s -> %s", (deviceClass, resourceClass) => {
    expect(ironicResourceClassFor(deviceClass)).toBe(resourceClass);
  });

  it("covers every device class, and gives a resource class exactly to those an Ironic manages", () => {
    expect(table.map(([c]) => c).sort()).toEqual([...DEVICE_CLASSES].sort());
    for (const c of DEVICE_CLASSES) expect(ironicResourceClassFor(c) !== null).toBe(ironicInstanceFor(c) !== null);
  });

  it("is a name Placement accepts once prefixed (CUSTOM_ and [A-Z0-9_], at most 255)", () => {
    const named = DEVICE_CLASSES.map(ironicResourceClassFor).filter((rc): rc is string => rc !== null);
    expect(named).toHaveLength(3);
    for (const rc of named) expect(`CUSTOM_${rc}`).toMatch(/^CUSTOM_[A-Z0-9_]{1,248}$/);
  });
});
