/**
 * The token endpoint under guessing: its rate limit slows down whoever is refused without
 * locking out the real agents (issue 33, finding 7: counted per address, client id and secret
 * fingerprint, the address behind a trusted proxy taken from X-Forwarded-For), and its cost does
 * not tell a recent secret rotation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startOAuthTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../../testing/inventory.ts";
import { bearer } from "@fm/test-support/process";

const LIMIT = 5;
/** The ingress in front of the hub: its X-Forwarded-For is believed (FM_TRUST_PROXY). */
const INGRESS = "10.8.0.0/16";
let hub: TestHub & { url: string; adminToken: string };
let inv: Inventory;

beforeAll(async () => {
  hub = await startOAuthTestHub({
    identity: { ...testIdentity(""), rotationOverlapMs: 3600_000, tokenRateLimitPerMinute: LIMIT },
    slowClients: { trustedProxies: [INGRESS] },
  });
  inv = await seedInventory(hub.db.prisma, 1);
});
afterAll(() => hub.close());

/** Creates a satellite; returns its OpenStack agent's client id and secret. */
async function openstackAgent(name: string): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${hub.url}/api/v1/satellites/`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify({ name, siteIds: [inv.sites.keflavik], environment: "prod" }),
  });
  const { secrets } = (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
  const s = secrets.find((x) => x.agent === "openstack")!;
  return { id: s.clientId, secret: s.clientSecret };
}

/** A token request from `address` (through a proxy that says it is from `forwardedFor`): its status. */
async function tokenFrom(address: string, clientId: string, secret: string, forwardedFor?: string): Promise<number> {
  const res = await hub.app.inject({
    method: "POST",
    url: "/oauth/token",
    remoteAddress: address,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
    },
    payload: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  });
  return res.statusCode;
}

describe("token endpoint rate limit", () => {
  it("guesses at an agent's client id from one host do not lock the agent out", async () => {
    const agent = await openstackAgent("sys1-guess");
    const guesses: number[] = [];
    for (let i = 0; i < 2 * LIMIT + 5; i++) guesses.push(await tokenFrom("10.9.0.66", agent.id, `guess-${i}`));
    // Many secrets for one client from one address: twice the limit, then that pair is slowed down.
    expect(guesses.slice(0, 2 * LIMIT)).toEqual(Array(2 * LIMIT).fill(401));
    expect(guesses.slice(2 * LIMIT)).toEqual(Array(5).fill(429));
    expect(await tokenFrom("10.9.0.5", agent.id, agent.secret)).toBe(200);
  });

  it("wrong secrets from an agent's own address do not lock out its right secret, which never succeeded there", async () => {
    const agent = await openstackAgent("sys6-shared");
    const shared = "10.9.0.40";
    const wrong: number[] = [];
    for (let i = 0; i < LIMIT + 60; i++) wrong.push(await tokenFrom(shared, agent.id, "wrong-secret"));
    expect(wrong.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(wrong.slice(LIMIT)).toEqual(Array(60).fill(429));
    // A few other wrong secrets, still under the pair's cap of twice the limit.
    for (let i = 0; i < LIMIT - 1; i++) expect(await tokenFrom(shared, agent.id, `other-${i}`)).toBe(401);
    expect(await tokenFrom(shared, agent.id, agent.secret)).toBe(200);
    // The wrong secret stays locked, whatever the right one did.
    expect(await tokenFrom(shared, agent.id, "wrong-secret")).toBe(429);
  });

  it("an agent that succeeded from an address keeps succeeding there however many secrets are guessed from it", async () => {
    const agent = await openstackAgent("sys7-renewing");
    const shared = "10.9.0.41";
    expect(await tokenFrom(shared, agent.id, agent.secret)).toBe(200);
    const guesses: number[] = [];
    for (let i = 0; i < 3 * LIMIT + 60; i++) guesses.push(await tokenFrom(shared, agent.id, `guess-${i}`));
    expect(guesses.slice(0, 2 * LIMIT)).toEqual(Array(2 * LIMIT).fill(401));
    expect(guesses.slice(2 * LIMIT).every((s) => s === 429)).toBe(true);
    expect(await tokenFrom(shared, agent.id, agent.secret)).toBe(200);
    expect(await tokenFrom(shared, agent.id, "guess-0")).toBe(429);
    expect(await tokenFrom(shared, agent.id, "a-new-guess")).toBe(429);
  });

  it("behind a trusted proxy the caller's X-Forwarded-For address is counted; from any other peer the header is ignored", async () => {
    const agent = await openstackAgent("sys8-ingress");
    const ingress = "10.8.0.3";
    for (let i = 0; i < LIMIT; i++) expect(await tokenFrom(ingress, agent.id, "wrong", "203.0.113.5")).toBe(401);
    expect(await tokenFrom(ingress, agent.id, "wrong", "203.0.113.5")).toBe(429);
    // Another caller behind the same ingress is another address: not limited by the first one's refusals.
    expect(await tokenFrom(ingress, agent.id, "wrong", "203.0.113.6")).toBe(401);
    expect(await tokenFrom("10.8.0.4", agent.id, "wrong", "198.51.100.9, 203.0.113.5")).toBe(429);
    // An untrusted peer cannot choose its address by the header: it is counted as itself.
    const untrusted = "10.9.0.50";
    expect(await tokenFrom(untrusted, agent.id, "wrong", "203.0.113.5")).toBe(401);
    for (let i = 1; i < LIMIT; i++)
      expect(await tokenFrom(untrusted, agent.id, "wrong", `203.0.113.${100 + i}`)).toBe(401);
    expect(await tokenFrom(untrusted, agent.id, "wrong", "203.0.113.200")).toBe(429);
    expect(await tokenFrom(untrusted, agent.id, agent.secret, "203.0.113.5")).toBe(200);
  });

  it("many refusals from one address slow down that address, not the agents that succeed from it", async () => {
    const agent = await openstackAgent("sys2-nat");
    const nat = "10.9.0.7";
    expect(await tokenFrom(nat, agent.id, agent.secret)).toBe(200);
    // A scanner behind the same address tries many client ids, each a few times.
    let limited = 0;
    for (let i = 0; i < LIMIT * 4 + 10; i++) if ((await tokenFrom(nat, `scan-${i % 8}`, "x")) === 429) limited++;
    expect(limited).toBeGreaterThanOrEqual(10);
    expect(await tokenFrom(nat, `scan-new-${randomUUID()}`, "x")).toBe(429);
    expect(await tokenFrom(nat, agent.id, agent.secret)).toBe(200);
  });

  it("successes do not count: an agent asking for many tokens is never limited", async () => {
    const agent = await openstackAgent("sys3-busy");
    const answers: number[] = [];
    for (let i = 0; i < LIMIT + 5; i++) answers.push(await tokenFrom("10.9.0.8", agent.id, agent.secret));
    expect(answers).toEqual(Array(LIMIT + 5).fill(200));
  });
});

describe("rotation overlap", () => {
  const hashes = async () =>
    Number(
      /^fleet_manager_client_secret_hashes_total (\S+)$/m.exec((await hub.app.inject({ url: "/metrics" })).body)?.[1] ??
        0,
    );
  /** The scrypt computations one token request made. */
  const costOf = async (clientId: string, secret: string, expected: number) => {
    const before = await hashes();
    expect(await tokenFrom("10.9.1.1", clientId, secret)).toBe(expected);
    return (await hashes()) - before;
  };

  it("a wrong secret costs one hash with or without an overlap, as does an unknown client", async () => {
    const plain = await openstackAgent("sys4-plain");
    const rotated = await openstackAgent("sys5-rotated");
    const res = await fetch(`${hub.url}/api/v1/satellites/sys5-rotated/agents/openstack/rotate-secret/`, {
      method: "POST",
      headers: bearer(hub.adminToken),
    });
    const { clientSecret } = (await res.json()) as { clientSecret: string };
    expect(await costOf(plain.id, "wrong", 401)).toBe(1);
    expect(await costOf(rotated.id, "wrong", 401)).toBe(1);
    expect(await costOf("nobody-at-all", "wrong", 401)).toBe(1);
    // Both secrets of the overlap work, each for one hash.
    expect(await costOf(rotated.id, rotated.secret, 200)).toBe(1);
    expect(await costOf(rotated.id, clientSecret, 200)).toBe(1);
  });
});
