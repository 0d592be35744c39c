/** The hub as an OAuth2 authorization server for machines, and its trust in an OIDC issuer for people. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { decodeProtectedHeader } from "jose";
import { TEST_ADMIN_SECRET } from "../../testing/test-hub.ts";
import { clientToken } from "@fm/test-support/process";
import { startIdentityTestHub, type IdentityTestHub } from "./identity-test-hub.ts";

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

  it("rate-limits the token endpoint per client id", async () => {
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
    const outsider = await t.people.token({ email: "eve@elsewhere.org" });
    expect((await api("/api/v1/sites", { token: outsider })).status).toBe(403);
    const wrongAud = await t.people.token({ email: "ana@example.com" }, { audience: "another-app" });
    expect((await api("/api/v1/sites", { token: wrongAud })).status).toBe(401);
  });
});
