/** The hub as an OAuth2 authorization server for machines, and its trust in an OIDC issuer for people. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { randomBytes, randomUUID } from "node:crypto";
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { TEST_ADMIN_SECRET } from "../../testing/test-hub.ts";
import { clientToken } from "@fm/test-support/process";
import { startIdentityTestHub, type IdentityTestHub } from "../../testing/identity-test-hub.ts";
import { identityRepo } from "./repo.ts";
import { hashSecret } from "../../lib/secrets.ts";

const ADMIN_SECRET = TEST_ADMIN_SECRET;
let t: IdentityTestHub;
let url: string;
let admin: string;
beforeAll(async () => {
  t = await startIdentityTestHub();
  ({ url, admin } = t);
});
afterAll(() => t.close());
const api: IdentityTestHub["api"] = (path, init) => t.api(path, init);

/** An access token for fleet-admin shaped as the hub's (RFC 9068), signed with a key the hub never made. */
const forgedAdminToken = (alg: "HS256" | "EdDSA", kid: string, key: Parameters<SignJWT["sign"]>[0]) =>
  new SignJWT({ client_id: "fleet-admin", client_instance: 1, scope: "fleet.admin" })
    .setProtectedHeader({ alg, typ: "at+jwt", kid })
    .setIssuer(url)
    .setAudience("fleet-manager")
    .setSubject("fleet-admin")
    .setIssuedAt()
    .setJti(randomUUID())
    .setExpirationTime("5m")
    .sign(key);

describe("authorization server", () => {
  it("works with openid-client: discovery, then the client credentials grant (basic and post)", async () => {
    for (const auth of [oidc.ClientSecretBasic(ADMIN_SECRET), oidc.ClientSecretPost(ADMIN_SECRET)]) {
      const config = await oidc.discovery(new URL(url), "fleet-admin", undefined, auth, {
        execute: [oidc.allowInsecureRequests],
      });
      const tokens = await oidc.clientCredentialsGrant(config, { scope: "fleet.read" });
      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.expires_in).toBe(600);
      const header = decodeProtectedHeader(tokens.access_token);
      expect(header).toMatchObject({ alg: "EdDSA", typ: "at+jwt" });
      expect(header.kid).toBeTruthy();
      expect((await api("/api/v1/sites/", { token: tokens.access_token })).status).toBe(200);
      // Only the scope it asked for: a read token cannot create.
      expect(
        (
          await api("/api/v1/sites/", {
            method: "POST",
            token: tokens.access_token,
            body: JSON.stringify({ slug: "nope", name: "x" }),
          })
        ).status,
      ).toBe(403);
    }
  });

  it("a client whose scopes include fleet.read by hierarchy may ask for it alone, and gets a read-only token", async () => {
    const secret = randomBytes(24).toString("base64url");
    t.issuedSecrets.push(secret);
    expect(
      await identityRepo.createAdminClient(t.hub.db.prisma, {
        clientId: "admin-only",
        scopes: ["fleet.admin"],
        secretHash: await hashSecret(secret),
      }),
    ).toBe(true);
    const asked = await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: "admin-only",
        client_secret: secret,
        scope: "fleet.read",
      }),
    });
    expect(asked.status).toBe(200);
    const { access_token: token, scope } = (await asked.json()) as { access_token: string; scope: string };
    expect(scope).toBe("fleet.read");
    expect((await api("/api/v1/sites/", { token })).status).toBe(200);
    const write = await api("/api/v1/sites/", {
      method: "POST",
      token,
      body: JSON.stringify({ slug: "read-only-try", name: "x" }),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("answers RFC 6749 errors for bad client credentials, grants and scopes", async () => {
    const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(body),
      });
    const wrong = await token({ grant_type: "client_credentials", client_id: "fleet-admin", client_secret: "wrong" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });
    expect((await token({ grant_type: "client_credentials", client_id: "nobody", client_secret: "x" })).status).toBe(
      401,
    );
    const grant = await token({ grant_type: "password", client_id: "fleet-admin", client_secret: ADMIN_SECRET });
    expect(await grant.json()).toMatchObject({ error: "unsupported_grant_type" });
    const scope = await token({
      grant_type: "client_credentials",
      client_id: "fleet-admin",
      client_secret: ADMIN_SECRET,
      scope: "agent:netbox",
    });
    expect(scope.status).toBe(400);
    expect(await scope.json()).toMatchObject({ error: "invalid_scope" });
    const meta = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
      token_endpoint_auth_methods_supported: string[];
    };
    expect(meta.issuer).toBe(url);
    expect(meta.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post"]);
  });

  it("rotates the signing key: old tokens stay valid, new ones carry the new kid, JWKS has both", async () => {
    const before = await clientToken(url, "fleet-admin", ADMIN_SECRET);
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await api("/api/v1/admin/signing-keys/rotate", { method: "POST", token: before });
    expect(rotated.status).toBe(200);
    const { kid } = (await rotated.json()) as { kid: string };
    expect(kid).not.toBe(oldKid);
    const fresh = await clientToken(url, "fleet-admin", ADMIN_SECRET);
    expect(decodeProtectedHeader(fresh).kid).toBe(kid);
    expect((await api("/api/v1/sites", { token: before })).status).toBe(200);
    const jwks = (await (await fetch(`${url}/oauth/jwks`)).json()) as { keys: { kid: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([oldKid, kid].sort());
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true); // public keys only
  });

  it("a token with an unknown kid costs no decryption and at most one read of the key table", async () => {
    const metric = async (name: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    };
    const [loads, decryptions] = [
      await metric("fleet_manager_signing_key_loads_total"),
      await metric("fleet_manager_signing_key_decryptions_total"),
    ];
    expect(loads).toBeGreaterThan(0);
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const forged = (kid: string) => forgedAdminToken("EdDSA", kid, privateKey);
    const kids = Array.from({ length: 60 }, (_, i) =>
      i % 2 ? `2026-01-01-${randomBytes(6).toString("hex")}` : `forged-${i}`,
    );
    const answers = await Promise.all(
      kids.map(async (kid) => (await api("/api/v1/sites", { token: await forged(kid) })).status),
    );
    expect(answers.every((s) => s === 401)).toBe(true);
    expect(await metric("fleet_manager_signing_key_loads_total")).toBeLessThanOrEqual(loads + 1);
    expect(await metric("fleet_manager_signing_key_decryptions_total")).toBe(decryptions);
  });

  it("a refused token is told one stable detail (expired, or could not be verified); the library's reason goes to the log only", async () => {
    const signed = async (alg: "HS256" | "EdDSA", kid: string) =>
      forgedAdminToken(
        alg,
        kid,
        alg === "HS256" ? randomBytes(32) : (await generateKeyPair("EdDSA", { crv: "Ed25519" })).privateKey,
      );
    const refused = {
      hs256: await signed("HS256", "any"),
      unknownKid: await signed("EdDSA", "forged-kid"),
      personWrongAudience: await t.people.token({ email: "ana@example.com" }, { audience: "another-app" }),
      personExpired: await t.people.token({ email: "ana@example.com" }, { expiresIn: "-5m" }),
    };
    const answers: Record<string, { detail: string; header: string }> = {};
    for (const [name, token] of Object.entries(refused)) {
      const res = await api("/api/v1/sites", { token });
      expect(res.status, name).toBe(401);
      answers[name] = {
        detail: ((await res.json()) as { detail: string }).detail,
        header: res.headers.get("www-authenticate")!,
      };
    }
    expect(answers).toEqual({
      hs256: {
        detail: "the token could not be verified",
        header: expect.stringContaining('error_description="the token could not be verified"'),
      },
      unknownKid: {
        detail: "the token could not be verified",
        header: expect.stringContaining("could not be verified"),
      },
      personWrongAudience: {
        detail: "the token could not be verified",
        header: expect.stringContaining("could not be verified"),
      },
      personExpired: {
        detail: "the token has expired",
        header: expect.stringContaining('error_description="the token has expired"'),
      },
    });
    // What the JWT library said is in the hub's log, for whoever investigates, and nowhere in an answer.
    const reasons = t.hub.logs.filter((l) => l.msg === "bearer token rejected").map((l) => String(l.reason));
    expect(reasons).toEqual(
      expect.arrayContaining([
        '"alg" (Algorithm) Header Parameter value not allowed',
        "unknown signing key 'forged-kid'",
        'unexpected "aud" claim value',
        '"exp" claim timestamp check failed',
      ]),
    );
  });

  it("rotation deletes keys retired long enough ago that nothing they signed is still valid", async () => {
    const stale = "2020-01-01-0123456789ab";
    const { publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    await t.hub.db.prisma.signingKey.create({
      data: {
        kid: stale,
        alg: "EdDSA",
        publicJwk: { ...(await exportJWK(publicKey)), kid: stale, alg: "EdDSA", use: "sig" },
        privateJwkEncrypted: "unused",
        createdAt: new Date("2020-01-01T00:00:00Z"),
        retiredAt: new Date(Date.now() - 2 * 24 * 3600_000),
      },
    });
    const rotated = await api("/api/v1/admin/signing-keys/rotate", { method: "POST", token: admin });
    expect(rotated.status).toBe(200);
    const kids = (await t.hub.db.prisma.signingKey.findMany({ select: { kid: true } })).map((k) => k.kid);
    expect(kids).not.toContain(stale);
    expect(kids).toContain(((await rotated.json()) as { kid: string }).kid);
    // The key retired by this rotation still verifies what it signed.
    expect((await api("/api/v1/sites", { token: admin })).status).toBe(200);
  });

  it("rate-limits refused token requests per address and client id", async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const res = await fetch(`${url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: "flooder", client_secret: "x" }),
      });
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited?.json()).toMatchObject({ error: "temporarily_unavailable" });
    // Another client from the same address is still served: the per-address limit is higher.
    await clientToken(url, "fleet-admin", ADMIN_SECRET);
  });
});

describe("people through an external OIDC issuer", () => {
  it("maps email domains and groups to scopes and checks the audience", async () => {
    const reader = await t.people.token({ email: "ana@example.com", email_verified: true });
    expect((await api("/api/v1/sites", { token: reader })).status).toBe(200);
    expect(
      (
        await api("/api/v1/sites", {
          method: "POST",
          token: reader,
          body: JSON.stringify({ slug: "by-reader", name: "x" }),
        })
      ).status,
    ).toBe(403);
    const adminPerson = await t.people.token({ email: "bo@example.com", groups: ["fleet-admins"] });
    const created = await api("/api/v1/sites", {
      method: "POST",
      token: adminPerson,
      body: JSON.stringify({ slug: "by-person", name: "x" }),
    });
    expect(created.status).toBe(201);
    const audit = (await (
      await api("/api/v1/audit?action=site.create&resourceId=" + ((await created.json()) as { id: string }).id, {
        token: admin,
      })
    ).json()) as { items: { principal: string }[] };
    expect(audit.items[0]!.principal).toBe("person:bo@example.com");
    // email_verified: an explicit false is refused the domain's scopes; an absent claim is not
    // (Entra ID's tokens never carry it: docs/api.md, "People").
    const unverified = await t.people.token({ email: "mallory@example.com", email_verified: false });
    expect((await api("/api/v1/sites", { token: unverified })).status).toBe(403);
    const noClaim = await t.people.token({ email: "entra-user@example.com" });
    expect((await api("/api/v1/sites", { token: noClaim })).status).toBe(200);
    const outsider = await t.people.token({ email: "eve@elsewhere.org" });
    expect((await api("/api/v1/sites", { token: outsider })).status).toBe(403);
    const wrongAud = await t.people.token({ email: "ana@example.com" }, { audience: "another-app" });
    expect((await api("/api/v1/sites", { token: wrongAud })).status).toBe(401);
  });

  it("a person who asked for less at login gets only that: scope `openid fleet.read` cannot create a site", async () => {
    const claims = { email: "cy@example.com", groups: ["fleet-admins"] };
    const createSite = (token: string, slug: string) =>
      api("/api/v1/sites", { method: "POST", token, body: JSON.stringify({ slug, name: "x" }) });
    const narrowed = await t.people.token({ ...claims, scope: "openid fleet.read" });
    expect((await api("/api/v1/sites", { token: narrowed })).status).toBe(200);
    const refused = await createSite(narrowed, "by-narrowed");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ status: 403, code: expect.any(String) });
    // Entra ID's name for the claim.
    const narrowedScp = await t.people.token({ ...claims, scp: "fleet.read" });
    expect((await createSite(narrowedScp, "by-narrowed-scp")).status).toBe(403);
    // The same person, their token naming no fleet scope, has what the mapping gives them.
    const full = await t.people.token({ ...claims, scope: "openid email" });
    expect((await createSite(full, "by-full")).status).toBe(201);
    // Asking for more than the mapping grants gains nothing.
    const greedy = await t.people.token({ email: "di@example.com", scope: "openid fleet.admin" });
    expect((await createSite(greedy, "by-greedy")).status).toBe(403);
    expect((await api("/api/v1/sites", { token: greedy })).status).toBe(403);
    const left = (await (await api("/api/v1/sites?slug=by-narrowed", { token: admin })).json()) as { items: unknown[] };
    expect(left.items).toEqual([]);
  });
});
