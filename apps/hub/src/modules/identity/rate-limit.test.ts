import { expect, it } from "vitest";
import { RateLimiter, TokenRateLimiter } from "./rate-limit.ts";

it("allows `limit` hits per window per key, then says how long to wait", () => {
  const rl = new RateLimiter(3, 60_000);
  const t0 = 1_000_000;
  expect([rl.hit("a", t0), rl.hit("a", t0 + 1), rl.hit("a", t0 + 2)]).toEqual([0, 0, 0]);
  expect(rl.hit("a", t0 + 10_000)).toBe(50);
  expect(rl.hit("b", t0 + 10_000)).toBe(0); // keys are independent: per client id, per address
  expect(rl.hit("a", t0 + 60_000)).toBe(0); // a new window
});

it("token requests: only refusals count, per (address, client id), and trusted pairs pass a busy address", () => {
  const rl = new TokenRateLimiter(2, 60_000);
  const t0 = 1_000_000;
  rl.succeeded("nat", "agent", t0);
  for (let i = 0; i < 2; i++) rl.refused("scanner", "agent", t0);
  expect(rl.wait("scanner", "agent", t0)).toBe(60); // that pair is limited
  expect(rl.wait("elsewhere", "agent", t0)).toBe(0); // the client is not
  for (let i = 0; i < 8; i++) rl.refused("nat", `id-${i}`, t0);
  expect(rl.wait("nat", "id-new", t0)).toBe(60); // the address is, for new pairs
  expect(rl.wait("nat", "agent", t0)).toBe(0); // but not for an agent that succeeded from it
  expect(rl.wait("nat", "id-new", t0 + 60_000)).toBe(0); // a new window
});
