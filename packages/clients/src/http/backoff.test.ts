import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.ts";

describe("backoffDelay (equal jitter)", () => {
  it("waits between half and all of base·2^(n-1)", () => {
    for (let n = 1; n <= 8; n++) {
      const ceiling = 100 * 2 ** (n - 1);
      expect(backoffDelay(n, 100, Infinity, () => 0)).toBe(ceiling / 2);
      expect(backoffDelay(n, 100, Infinity, () => 0.999999)).toBeLessThanOrEqual(ceiling);
      expect(backoffDelay(n, 100, Infinity, () => 1)).toBe(ceiling);
    }
  });

  it("stays within its bounds for any draw of the random source", () => {
    for (let i = 0; i < 1000; i++) {
      const n = 1 + (i % 12);
      const ceiling = Math.min(10_000, 50 * 2 ** (n - 1));
      const d = backoffDelay(n, 50, 10_000);
      expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      expect(d).toBeLessThanOrEqual(ceiling);
    }
  });

  it("is capped, and the cap keeps its jitter", () => {
    expect(backoffDelay(40, 1000, 60_000, () => 1)).toBe(60_000);
    expect(backoffDelay(40, 1000, 60_000, () => 0)).toBe(30_000);
  });

  it("treats zero or fewer failures as the first", () => {
    expect(backoffDelay(0, 1000, 60_000, () => 1)).toBe(1000);
    expect(backoffDelay(-3, 1000, 60_000, () => 0)).toBe(500);
  });

  it("without a cap, grows without one (the clients' loops, whose attempts are few)", () => {
    expect(backoffDelay(5, 200, undefined, () => 1)).toBe(3200);
  });
});
