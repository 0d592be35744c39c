/**
 * The Entra ID token for Kusto over HTTP against the token endpoint stand-in: kept while fresh,
 * renewed before it expires (`expires_in`), and fetched at once after the sink saw a 401.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KustoReceiver } from "../testing/kusto-receiver.ts";
import { EntraTokenSource } from "./entra-token.ts";

const receiver = new KustoReceiver({ tokenLifetimeS: 3599 });
beforeAll(() => receiver.up());
afterAll(() => receiver.down());

describe("the Entra ID token source", () => {
  it("keeps a token for 80 % of its expires_in, then asks for a new one before it expires", async () => {
    let now = Date.now();
    const tokens = new EntraTokenSource({
      authority: receiver.url,
      tenant: receiver.o.tenant,
      clientId: receiver.o.clientId,
      secret: () => receiver.o.clientSecret,
      scope: `${receiver.url}/.default`,
      timeoutMs: 5000,
      now: () => now,
    });
    const first = await tokens.get();
    now += 0.79 * 3599 * 1000;
    expect(await tokens.get()).toBe(first);
    expect(receiver.requests.token).toBe(1);
    now += 0.02 * 3599 * 1000;
    const second = await tokens.get();
    expect(second).not.toBe(first);
    expect(receiver.requests.token).toBe(2);
    tokens.invalidate();
    expect(await tokens.get()).not.toBe(second);
    expect(receiver.requests.token).toBe(3);
  });
});
