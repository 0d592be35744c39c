import { describe, expect, it } from "vitest";
import { formatCount } from "./ui.tsx";

describe("formatCount", () => {
  it("groups digits by three as en-US toLocaleString does, for counts from 0 to billions", () => {
    const counts = [0, 1, 12, 999, 1000, 1001, 9999, 50_000, 100_000, 123_456, 1_000_000, 25_000_001, 1_234_567_890];
    for (const n of counts) expect(formatCount(n)).toBe(n.toLocaleString("en-US"));
    expect(formatCount(-1234)).toBe("-1,234");
  });
});
