import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import spectralCore from "@stoplight/spectral-core";
import { oas } from "@stoplight/spectral-rulesets";
import { TEST_ADMIN_SECRET, startTestHub, type TestHub } from "../testing/test-hub.ts";
import { ensureAdminClient } from "../modules/identity/bootstrap.ts";
import {
  AuthorizationServerMetadataSchema,
  JwksSchema,
  OAuthErrorSchema,
  TokenResponseSchema,
} from "../modules/identity/routes.ts";
import { cspDirectives } from "../testing/csp.ts";

const { Spectral } = spectralCore;
/** Spectral's severities, by number (0 is an error, 1 a warning). */
const SEVERITY = ["error", "warning", "info", "hint"];

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
  await hub.app.ready();
});
afterAll(() => hub.close());

it("serves an OpenAPI 3.1 document listing every /api/v1 operation with its error responses", async () => {
  const res = await hub.app.inject({ url: "/openapi.json" });
  expect(res.statusCode).toBe(200);
  const doc = res.json<{
    openapi: string;
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  }>();
  expect(doc.openapi).toBe("3.1.0");
  const ops = Object.entries(doc.paths)
    .filter(([p]) => p.startsWith("/api/v1"))
    .flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ p, m, op })));
  expect(ops.length).toBeGreaterThanOrEqual(20);
  // Every operation the hub serves under /api/v1 is in the document (a trailing slash is the same path).
  const key = (m: string, p: string) => `${m.toUpperCase()} ${p.replace(/:(\w+)/g, "{$1}").replace(/(.)\/$/, "$1")}`;
  const served = new Set(
    hub.app.routeTable.filter((r) => r.url.startsWith("/api/v1")).map((r) => key(r.method, r.url)),
  );
  const documented = new Set(ops.map(({ p, m }) => key(m, p)));
  expect([...served].filter((k) => !documented.has(k)).sort()).toEqual([]);
  for (const { p, m, op } of ops) {
    for (const status of ["400", "401", "403", "500"]) {
      expect(op.responses[status], `${m} ${p} ${status}`).toBeDefined();
      expect(Object.keys(op.responses[status]!.content ?? {}), `${m} ${p} ${status}`).toEqual([
        "application/problem+json",
      ]);
    }
  }
  const docs = await hub.app.inject({ url: "/docs/" });
  expect(docs.statusCode).toBe(200);
  expect(docs.body).toContain("swagger");
});

it("serves Swagger UI under /docs with the web UI's protections: its CSP (no framing by another origin), nosniff, no referrer", async () => {
  // The page, its initializer script, its stylesheet, and an answer for a file it does not have.
  for (const url of [
    "/docs/",
    "/docs/static/index.html",
    "/docs/static/swagger-initializer.js",
    "/docs/static/swagger-ui.css",
    "/docs/static/nope.js",
  ]) {
    const res = await hub.app.inject({ url });
    const csp = cspDirectives(res.headers["content-security-policy"]);
    expect(csp["frame-ancestors"], url).toEqual(["'none'"]);
    expect(csp["script-src"], url).toEqual(["'self'"]);
    expect(csp["default-src"], url).toEqual(["'none'"]);
    expect(res.headers["x-content-type-options"], url).toBe("nosniff");
    expect(res.headers["referrer-policy"], url).toBe("no-referrer");
  }
  // No validator badge (an image from validator.swagger.io, which the policy would block).
  expect((await hub.app.inject({ url: "/docs/static/swagger-initializer.js" })).body).toContain('"validatorUrl":null');
});

it("declares a scope on every /api/v1 route", () => {
  const api = hub.app.routeTable.filter((r) => r.url.startsWith("/api/v1"));
  expect(api.length).toBeGreaterThanOrEqual(20);
  expect(api.filter((r) => !r.scope).map((r) => `${r.method} ${r.url}`)).toEqual([]);
});

it("documents a reflection push's items as objects, though the route leaves checking them to the service", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<{
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  }>();
  // The body's schema, as sent (its served twin is not in the document: no operation answers one).
  expect(doc.components.schemas.ReflectionPushInput!.properties.items).toMatchObject({
    type: "array",
    maxItems: 100_000,
    items: { type: "object" },
  });
});

type Operation = { operationId?: string; security?: unknown[]; tags?: string[]; description?: string };
const operationsOf = (doc: { paths: Record<string, Record<string, Operation>> }) =>
  Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ p, m, op })));

/**
 * Spectral rules this document is allowed to break, each argued in docs/api.md ("The OpenAPI
 * document and its linter"). None today: a name added here must be argued there too.
 */
const ARGUED_AWAY: string[] = [];

it("passes Spectral's spectral:oas ruleset with no error and no warning but those argued away in docs/api.md", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<Record<string, unknown>>();
  const spectral = new Spectral();
  spectral.setRuleset(oas as never);
  const results = await spectral.run(doc);
  const found = results
    .filter((r) => r.severity <= 1 && !ARGUED_AWAY.includes(String(r.code)))
    .map((r) => `${SEVERITY[r.severity]} ${String(r.code)} at ${r.path.join(".")}: ${r.message}`);
  expect(found).toEqual([]);
  const apiMd = readFileSync(new URL("../../../../docs/api.md", import.meta.url), "utf8");
  for (const rule of ARGUED_AWAY) expect(apiMd, `docs/api.md argues ${rule} away`).toContain(`\`${rule}\``);
});

it("names every operation with a unique camelCase operationId, declared on its route", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<{
    paths: Record<string, Record<string, Operation>>;
  }>();
  const ops = operationsOf(doc);
  expect(
    ops.filter(({ op }) => !/^[a-z][a-zA-Z0-9]*$/.test(op.operationId ?? "")).map(({ m, p }) => `${m} ${p}`),
  ).toEqual([]);
  const ids = ops.map(({ op }) => op.operationId);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  // What generated clients call their methods: renaming one breaks every client, so they are fixed here.
  const idOf = (m: string, p: string) => doc.paths[p]?.[m]?.operationId;
  expect(idOf("get", "/api/v1/devices")).toBe("listDevices");
  expect(idOf("get", "/api/v1/devices/{id}")).toBe("getDevice");
  expect(idOf("post", "/api/v1/jobs")).toBe("createJob");
  expect(idOf("post", "/oauth/token")).toBe("issueToken");
  // The route table (docs/api.md) shows the same names, taken from the routes' declarations.
  const declared = new Map(hub.app.routeTable.map((r) => [`${r.method} ${r.url}`, r.operationId]));
  for (const { m, p, op } of ops)
    expect(declared.get(`${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ":$1")}`), `${m} ${p}`).toBe(op.operationId);
});

it("asks a bearer token exactly where the hub does: not on the probes, the token endpoint, its keys and discovery", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<{
    security: unknown[];
    paths: Record<string, Record<string, Operation>>;
  }>();
  expect(doc.security).toEqual([{ bearerAuth: [] }]);
  const open = [
    "get /healthz",
    "get /readyz",
    "post /oauth/token",
    "get /oauth/jwks",
    "get /.well-known/openid-configuration",
    "get /.well-known/oauth-authorization-server",
  ];
  const ops = operationsOf(doc);
  for (const key of open) expect(ops.map(({ m, p }) => `${m} ${p}`)).toContain(key);
  const scopeOf = new Map(hub.app.routeTable.map((r) => [`${r.method} ${r.url}`, r.scope]));
  for (const { m, p, op } of ops) {
    const scope = scopeOf.get(`${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ":$1")}`);
    const bearer = !op.security || op.security.some((s) => Object.keys(s as object).includes("bearerAuth"));
    expect(bearer, `${m} ${p} (scope ${scope})`).toBe(scope !== undefined && scope !== "public");
  }
  expect(doc.paths["/oauth/token"]!.post!.security).toEqual([{ clientBasic: [] }, {}]);
});

it("documents the token endpoint's form and the JWKS and discovery answers as the hub gives them", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<{
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  }>();
  expect(Object.keys(doc.paths["/oauth/token"]!.post!.requestBody!.content)).toEqual([
    "application/x-www-form-urlencoded",
  ]);
  expect(doc.components.schemas.TokenRequestInput).toMatchObject({
    properties: { grant_type: { const: "client_credentials" } },
    required: ["grant_type"],
  });
  await ensureAdminClient(hub.db.prisma, { secret: TEST_ADMIN_SECRET, dataDir: "/nonexistent", log: hub.app.log });
  const token = await hub.app.inject({
    method: "POST",
    url: "/oauth/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: "fleet-admin",
      client_secret: TEST_ADMIN_SECRET,
    }).toString(),
  });
  expect(token.statusCode).toBe(200);
  expect(TokenResponseSchema.safeParse(token.json()).error).toBeUndefined();
  const refused = await hub.app.inject({
    method: "POST",
    url: "/oauth/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: "grant_type=password",
  });
  expect(refused.statusCode).toBe(400);
  expect(OAuthErrorSchema.safeParse(refused.json()).error).toBeUndefined();
  const jwks = await hub.app.inject({ url: "/oauth/jwks" });
  expect(JwksSchema.safeParse(jwks.json()).error).toBeUndefined();
  expect(jwks.json<{ keys: unknown[] }>().keys.length).toBeGreaterThan(0);
  for (const url of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
    const res = await hub.app.inject({ url });
    expect(AuthorizationServerMetadataSchema.safeParse(res.json()).error, url).toBeUndefined();
  }
});
