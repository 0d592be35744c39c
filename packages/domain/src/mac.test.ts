import { describe, expect, it } from "vitest";
import { canonicalMac } from "./mac.ts";

describe("canonicalMac", () => {
  it.each([
    ["7c:fe:90:5a:00:01", "7C:FE:90:5A:00:01"],
    ["7C-FE-90-5A-00-01", "7C:FE:90:5A:00:01"],
    ["7cfe.905a.0001", "7C:FE:90:5A:00:01"],
    [" 7cfe905a0001 ", "7C:FE:90:5A:00:01"],
  ])("%s is %s", (input, want) => expect(canonicalMac(input)).toBe(want));
  it.each(["", "7c:fe:90:5a:00", "7c:fe:90:5a:00:01:02", "zz:fe:90:5a:00:01"])("%j is no MAC", (input) =>
    expect(canonicalMac(input)).toBeNull(),
  );
});
