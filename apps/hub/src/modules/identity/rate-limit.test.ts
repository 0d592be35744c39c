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

it("token requests: only refusals count, per (address, client id, secret), with higher caps per pair and per address", () => {
  const rl = new TokenRateLimiter(2, 60_000);
  const t0 = 1_000_000;
  const right = rl.fingerprint("right");
  rl.succeeded("nat", "agent", right, t0);
  for (let i = 0; i < 2; i++) rl.refused("scanner", "agent", rl.fingerprint("wrong"), t0);
  expect(rl.wait("scanner", "agent", rl.fingerprint("wrong"), t0)).toBe(60); // that secret is limited there
  expect(rl.wait("scanner", "agent", rl.fingerprint("other"), t0)).toBe(0); // another one is not (yet)
  expect(rl.wait("elsewhere", "agent", rl.fingerprint("wrong"), t0)).toBe(0); // nor the client elsewhere
  for (let i = 0; i < 2; i++) rl.refused("scanner", "agent", rl.fingerprint(`guess-${i}`), t0);
  expect(rl.wait("scanner", "agent", rl.fingerprint("other"), t0)).toBe(60); // the pair's cap: twice the limit
  for (let i = 0; i < 8; i++) rl.refused("nat", `id-${i}`, rl.fingerprint("x"), t0);
  expect(rl.wait("nat", "id-new", rl.fingerprint("y"), t0)).toBe(60); // the address's cap, for new pairs
  expect(rl.wait("nat", "agent", right, t0)).toBe(0); // but not for a secret that succeeded from it
  expect(rl.wait("nat", "agent", rl.fingerprint("guess"), t0)).toBe(60); // which exempts that secret only
  expect(rl.wait("nat", "id-new", rl.fingerprint("y"), t0 + 60_000)).toBe(0); // a new window
  // Successes count for nothing: more of them than every cap, and neither the secret, its pair nor its address is limited.
  const busy = rl.fingerprint("busy");
  for (let i = 0; i < 2 * 4 + 1; i++) rl.succeeded("busy-host", "agent", busy, t0);
  expect(rl.wait("busy-host", "agent", busy, t0)).toBe(0);
  expect(rl.wait("busy-host", "agent", rl.fingerprint("new"), t0)).toBe(0);
  expect(rl.wait("busy-host", "other", rl.fingerprint("new"), t0)).toBe(0);
});

it("a secret's fingerprint is short, keyed per process, and not the secret", () => {
  const a = new TokenRateLimiter(1);
  const b = new TokenRateLimiter(1);
  const secret = "s3cret-value-of-an-agent";
  expect(a.fingerprint(secret)).toBe(a.fingerprint(secret));
  expect(a.fingerprint(secret)).toHaveLength(16);
  expect(a.fingerprint(secret)).not.toContain(secret.slice(0, 6));
  expect(a.fingerprint(secret)).not.toBe(b.fingerprint(secret));
  expect(a.fingerprint(secret)).not.toBe(a.fingerprint(`${secret}x`));
  expect(a.fingerprint(undefined)).toBe("");
});
