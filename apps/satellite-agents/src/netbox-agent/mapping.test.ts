import { describe, expect, it } from "vitest";
import { NetboxDeviceSchema, NetboxInterfaceSchema, type NetboxObjectChange } from "@fm/clients";
import { NetboxItemSchema } from "@fm/domain";
import { netboxFixture } from "@fm/test-support/netbox-fixtures";
import { relevant } from "./changes.ts";
import { RoleClassMapping, cpuArchitectureOf, toNetboxItem } from "./mapping.ts";

const fixture = netboxFixture;

describe("NetBox → reflection item", () => {
  it("maps NetBox 4.5's recorded device and interface shapes to an item the hub accepts", () => {
    const device = NetboxDeviceSchema.parse((fixture("device-list-page.json").results as unknown[])[0]);
    const iface = NetboxInterfaceSchema.parse({
      ...fixture("interface.json"),
      device: { ...(fixture("interface.json").device as object), id: device.id },
    });
    const out = toNetboxItem(device, [iface], {
      roles: { [device.role.slug]: "GPU_COMPUTE" },
      deviceTypes: new Map(),
      mgmtIps: new Map(),
    });
    if (!("item" in out)) throw new Error(out.reason);
    expect(NetboxItemSchema.parse(out.item)).toEqual(out.item);
    expect(out.item).toMatchObject({
      netboxId: device.id,
      name: device.name,
      role: { slug: device.role.slug, deviceClass: "GPU_COMPUTE" },
    });
    expect(out.item.interfaces[0]).toMatchObject({
      name: "eth0",
      macAddress: "B8:3F:D2:01:00:11",
      peerDevice: "leaf-iad1-01",
      peerInterface: "swp1",
    });
  });

  it("reads InfiniBand GUIDs from labels, infers CPU architecture, and skips what it cannot map", () => {
    expect(cpuArchitectureOf({ model: "GB300 NVL72 Compute Tray", slug: "x", custom_fields: {} })).toBe("aarch64");
    expect(cpuArchitectureOf({ model: "PowerEdge R760", slug: "poweredge-r760", custom_fields: {} })).toBe("x86_64");
    expect(cpuArchitectureOf({ model: "Anything", slug: "x", custom_fields: { cpu_architecture: "aarch64" } })).toBe(
      "aarch64",
    );
    const device = NetboxDeviceSchema.parse((fixture("device-list-page.json").results as unknown[])[0]);
    const ib = NetboxInterfaceSchema.parse({
      ...fixture("interface.json"),
      name: "ib0",
      label: "a088:c203:00a1:b2c3",
      link_peers: [],
      link_peers_type: null,
    });
    const ctx = { roles: {}, deviceTypes: new Map(), mgmtIps: new Map() };
    const out = toNetboxItem(device, [ib], ctx);
    expect("item" in out && out.item.interfaces[0]!.ibGuid).toBe("a088:c203:00a1:b2c3");
    // A GUID written by hand as ibstat prints it reaches the hub in the same form; other text is no GUID.
    const asIbstat = toNetboxItem(device, [{ ...ib, label: "0xA088C20300A1B2C3" }], ctx);
    expect("item" in asIbstat && asIbstat.item.interfaces[0]!.ibGuid).toBe("a088:c203:00a1:b2c3");
    const text = toNetboxItem(device, [{ ...ib, label: "to leaf-3" }], ctx);
    expect("item" in text && text.item.interfaces[0]!.ibGuid).toBeNull();
    expect("item" in out && out.item.role.deviceClass).toBe("OTHER");
    expect(toNetboxItem({ ...device, name: null }, [], ctx)).toMatchObject({ reason: "unnamed device" });
    expect(toNetboxItem({ ...device, status: { value: "burning", label: "Burning" } }, [], ctx)).toMatchObject({
      skipped: device.name,
    });
  });

  it("parses the role mapping and rejects an unknown class", () => {
    expect(RoleClassMapping.parse('{"gpu-node":"GPU_COMPUTE"}')).toEqual({ "gpu-node": "GPU_COMPUTE" });
    expect(RoleClassMapping.safeParse('{"gpu-node":"GPU"}').success).toBe(false);
    expect(RoleClassMapping.safeParse("not json").success).toBe(false);
  });

  it("tells which change-log records concern the site's view", () => {
    const known = { items: [], deviceIds: new Set([10]), interfaceIds: new Set([100]) };
    const change = (
      type: string,
      id: number,
      post: Record<string, unknown> | null,
      pre: Record<string, unknown> | null = null,
    ) =>
      ({
        changed_object_type: type,
        changed_object_id: id,
        postchange_data: post,
        prechange_data: pre,
      }) as unknown as NetboxObjectChange;
    expect(relevant(change("dcim.device", 10, {}), known, [1])).toBe(true);
    expect(relevant(change("dcim.device", 99, { cluster: 1 }), known, [1])).toBe(true); // joins the cluster
    expect(relevant(change("dcim.device", 99, { cluster: 2 }, { cluster: 2 }), known, [1])).toBe(false);
    expect(relevant(change("dcim.interface", 555, { device: 10 }), known, [1])).toBe(true);
    expect(relevant(change("dcim.interface", 555, { device: 11 }), known, [1])).toBe(false);
    expect(relevant(change("dcim.macaddress", 7, { assigned_object_id: 100 }), known, [1])).toBe(true);
    expect(relevant(change("dcim.macaddress", 7, { assigned_object_id: 101 }), known, [1])).toBe(false);
  });
});
