import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.ts";

describe("backoffDelay", () => {
  it("doubles per failure between half and all of the ceiling, and stops at the cap", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, 1000, 60_000, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, 1000, 60_000, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(30, 1000, 60_000, () => 1)).toBe(60_000);
    expect(backoffDelay(30, 1000, 60_000, () => 0)).toBe(30_000);
  });
});
