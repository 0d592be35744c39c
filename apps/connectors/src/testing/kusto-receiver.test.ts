/**
 * The Kusto/Entra ID stand-in answers as Microsoft documents the real services (./SOURCES.md):
 * the shapes a sink can observe, checked here so the stand-in cannot drift from its citations.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KustoReceiver } from "./kusto-receiver.ts";

const receiver = new KustoReceiver();
beforeAll(() => receiver.up());
afterAll(() => receiver.down());

const grant = (secret = receiver.o.clientSecret) =>
  fetch(`${receiver.url}/${receiver.o.tenant}/oauth2/v2.0/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: receiver.o.clientId,
      client_secret: secret,
      scope: `${receiver.url}/.default`,
      grant_type: "client_credentials",
    }),
  });
const ingest = (token: string) =>
  fetch(
    `${receiver.url}/v1/rest/ingest/${receiver.o.database}/${receiver.o.table}?streamFormat=MultiJSON&mappingName=${receiver.o.mappingName}`,
    { method: "POST", headers: { authorization: `Bearer ${token}`, accept: "application/json" }, body: "" },
  );

describe("the Entra ID token endpoint stand-in", () => {
  it("answers a grant with exactly the documented fields", async () => {
    const res = await grant();
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: receiver.o.tokenLifetimeS });
  });

  it("refuses a wrong secret with invalid_client and an AADSTS description", async () => {
    const res = await grant("wrong");
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string; error_codes: number[] };
    expect(body.error).toBe("invalid_client");
    expect(body.error_codes).toEqual([7000215]);
    expect(body.error_description).toMatch(/^AADSTS7000215: .*\r\nTrace ID: .*\r\nCorrelation ID: .*\r\nTimestamp: /);
  });
});

describe("the Kusto streaming ingestion stand-in", () => {
  it("answers an expired token with a bare 401: no error body, as for no other status", async () => {
    const token = ((await (await grant()).json()) as { access_token: string }).access_token;
    receiver.expireTokens();
    const res = await ingest(token);
    expect(res.status).toBe(401);
    expect(await res.text()).toBe("");
  });

  it("answers throttling with 429 and a OneApiError body that is not permanent", async () => {
    const token = ((await (await grant()).json()) as { access_token: string }).access_token;
    receiver.throttle(1, 3);
    const res = await ingest(token);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toMatchObject({ error: { code: "TooManyRequests", "@permanent": false } });
  });
});
