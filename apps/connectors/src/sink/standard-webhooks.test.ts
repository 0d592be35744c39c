import { describe, expect, it } from "vitest";
import { secretKey, sign, verify } from "./standard-webhooks.ts";

// The example of the Standard Webhooks specification (spec/standard-webhooks.md, "Signature scheme").
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = 1614265330;
const BODY = '{"test": 2432232314}';

describe("Standard Webhooks signatures", () => {
  it("reproduces the specification's example signature", () => {
    expect(sign(secretKey(SECRET), ID, TS, BODY)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verifies one of several signatures, and refuses a changed body or an old timestamp", () => {
    const key = secretKey(SECRET);
    const signature = `v1,bm9wZQ== ${sign(key, ID, TS, BODY)}`;
    expect(verify(key, { id: ID, timestamp: String(TS), signature }, BODY, TS + 10)).toBe(true);
    expect(verify(key, { id: ID, timestamp: String(TS), signature }, BODY + " ", TS + 10)).toBe(false);
    expect(verify(key, { id: ID, timestamp: String(TS), signature }, BODY, TS + 301)).toBe(false);
  });
});
