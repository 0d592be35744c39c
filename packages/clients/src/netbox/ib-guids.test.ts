import { describe, expect, it } from "vitest";
import { netboxFixture } from "@fm/test-support/netbox-fixtures";
import { planIbGuids } from "./ib-guids.ts";
import { NetboxInterfaceSchema } from "./schemas.ts";

/** A NetBox 4.5 interface (the recorded fixture) with this id, name, label and no MAC. */
const iface = (id: number, name: string, label = "") =>
  NetboxInterfaceSchema.parse({
    ...netboxFixture("interface.json"),
    id,
    name,
    label,
    mac_address: null,
    primary_mac_address: null,
    mac_addresses: [],
  });
/** An InfiniBand port as IPA's Mellanox hardware manager reports it. */
const ib = (name: string, guidBytes: string, mac?: string) => ({
  name,
  mac_address: mac ?? null,
  client_id: `ff:00:00:00:00:00:02:00:00:02:c9:00:${guidBytes}`,
});

describe("planIbGuids", () => {
  it("matches ports to interfaces by name and plans a write only where the label differs", () => {
    const rows = planIbGuids(
      "gpu001",
      [
        ib("ibp12s0", "7c:fe:90:03:00:29:26:52"),
        ib("ibp13s0", "7c:fe:90:03:00:29:26:53"),
        ib("ibp14s0", "7c:fe:90:03:00:29:26:54"),
        ib("ibp15s0", "7c:fe:90:03:00:29:26:55"),
        { name: "eno1", mac_address: "52:54:00:12:34:56", client_id: null },
      ],
      [
        iface(1, "ibp12s0"),
        iface(2, "ibp13s0", "0x7CFE900300292653"),
        iface(3, "ibp14s0", "7cfe:9003:0029:0000"),
        iface(4, "ibp15s0", "rail 4"),
        iface(5, "eno1"),
      ],
    );
    expect(rows.map((r) => [r.port, r.guid, r.interface?.name, r.action])).toEqual([
      ["ibp12s0", "7cfe:9003:0029:2652", "ibp12s0", "write"],
      // The same GUID written by hand as ibstat prints it: nothing to do.
      ["ibp13s0", "7cfe:9003:0029:2653", "ibp13s0", "unchanged"],
      // Another GUID (the HCA was replaced): written.
      ["ibp14s0", "7cfe:9003:0029:2654", "ibp14s0", "write"],
      // A label someone wrote that is no GUID: never overwritten.
      ["ibp15s0", "7cfe:9003:0029:2655", "ibp15s0", "other-label"],
    ]);
  });

  it("falls back to the InfiniBand MAC, then to the GUID already in a label; an unmatched port is reported", () => {
    const byMac = NetboxInterfaceSchema.parse({
      ...netboxFixture("interface.json"),
      id: 7,
      name: "HCA1 port 1",
      label: "",
    });
    const mac = byMac.mac_address!.toLowerCase();
    const rows = planIbGuids(
      "gpu002",
      [
        ib("ib0", "aa:bb:cc:00:00:dd:ee:ff", mac),
        ib("ib1", "7c:fe:90:03:00:29:26:52"),
        ib("ib2", "7c:fe:90:03:00:29:26:99"),
      ],
      [byMac, iface(8, "HCA2 port 1", "7cfe:9003:0029:2652")],
    );
    expect(rows.map((r) => [r.port, r.interface?.name ?? null, r.action])).toEqual([
      ["ib0", "HCA1 port 1", "write"],
      ["ib1", "HCA2 port 1", "unchanged"],
      ["ib2", null, "no-interface"],
    ]);
  });

  it("never matches two ports to one interface", () => {
    const rows = planIbGuids(
      "gpu003",
      [ib("ib0", "7c:fe:90:03:00:29:26:52"), ib("ib0", "7c:fe:90:03:00:29:26:53")],
      [iface(1, "ib0")],
    );
    expect(rows.map((r) => r.action)).toEqual(["write", "no-interface"]);
  });
});
