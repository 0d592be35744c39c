import { expect, it } from "vitest";
import { RateLimiter } from "./rate-limit.ts";

it("allows `limit` hits per window per key, then says how long to wait", () => {
  const rl = new RateLimiter(3, 60_000);
  const t0 = 1_000_000;
  expect([rl.hit("a", t0), rl.hit("a", t0 + 1), rl.hit("a", t0 + 2)]).toEqual([0, 0, 0]);
  expect(rl.hit("a", t0 + 10_000)).toBe(50);
  expect(rl.hit("b", t0 + 10_000)).toBe(0); // keys are independent: per client id, per address
  expect(rl.hit("a", t0 + 60_000)).toBe(0); // a new window
});
