import { describe, expect, it } from "vitest";
import { ibGuidFromClientId, ibMacOfGuid, parseIbGuid } from "./ib-guid.ts";

describe("parseIbGuid", () => {
  it.each([
    ["7cfe:9003:0029:2652", "7cfe:9003:0029:2652"],
    ["7CFE:9003:0029:2652", "7cfe:9003:0029:2652"],
    ["0x7cfe900300292652", "7cfe:9003:0029:2652"],
    ["7cfe900300292652", "7cfe:9003:0029:2652"],
    ["7c:fe:90:03:00:29:26:52", "7cfe:9003:0029:2652"],
    [" 7cfe:9003:0029:2652 ", "7cfe:9003:0029:2652"],
  ])("%s is the GUID %s", (text, guid) => expect(parseIbGuid(text)).toBe(guid));

  it.each([
    "",
    "ib0",
    "uplink to leaf-3",
    "7cfe:9003:0029",
    "7c:fe:90:29:26:52",
    "0x7cfe9003002926",
    "7cfe:9003:0029:265g",
  ])("%j is not a GUID", (text) => expect(parseIbGuid(text)).toBeNull());
});

describe("ibGuidFromClientId", () => {
  it("takes the last 8 bytes of IPA's client-id (the Mellanox example in mlnx.py)", () => {
    expect(ibGuidFromClientId("ff:00:00:00:00:00:02:00:00:02:c9:00:7c:fe:90:03:00:29:26:52")).toBe(
      "7cfe:9003:0029:2652",
    );
    // The Ironic InfiniBand spec's example.
    expect(ibGuidFromClientId("ff:00:00:00:00:00:02:00:00:02:c9:00:00:02:c9:03:00:00:10:39")).toBe(
      "0002:c903:0000:1039",
    );
  });

  it.each(["", "52:54:00:12:34:56", "ff:00:00:00:00:00:02:00:00:02:c9:00:7c:fe:90:03:00:29:26", "zz".repeat(20)])(
    "%j is not an InfiniBand client-id",
    (text) => expect(ibGuidFromClientId(text)).toBeNull(),
  );
});

describe("ibMacOfGuid", () => {
  it("is the GUID's first and last three bytes, as IPA reports the port's MAC", () => {
    expect(ibMacOfGuid("7cfe:9003:0029:2652")).toBe("7c:fe:90:29:26:52");
  });
});
