import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";

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

it("declares a scope on every /api/v1 route", () => {
  const api = hub.app.routeTable.filter((r) => r.url.startsWith("/api/v1"));
  expect(api.length).toBeGreaterThanOrEqual(20);
  expect(api.filter((r) => !r.scope).map((r) => `${r.method} ${r.url}`)).toEqual([]);
});

it("documents a reflection push's items as objects, though the route leaves checking them to the service", async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json<{
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  }>();
  expect(doc.components.schemas.ReflectionPush!.properties.items).toMatchObject({
    type: "array",
    maxItems: 100_000,
    items: { type: "object" },
  });
});
