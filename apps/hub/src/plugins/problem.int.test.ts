import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub({ bodyLimitBytes: 64 * 1024 });
  // A route that fails the way a bug would, to see what a caller and the logs get.
  hub.app.get("/test/boom", async () => {
    throw new Error("connection string postgres://secret@db leaked?");
  });
});
afterAll(() => hub.close());

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({
    status,
    code,
    type: expect.stringContaining(code.replace(/_/g, "-")),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.requestId).toBe(res.headers["x-request-id"]);
  expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
  return body;
}

describe("problem+json for every error", () => {
  it("400 lists each invalid and unknown field", async () => {
    const res = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites/",
      payload: { slug: "Not A Slug", name: 5, colour: "red" },
    });
    const body = expectProblem(res, 400, "validation_failed");
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { path: "body.slug", message: expect.stringContaining("a-z0-9") },
        { path: "body.name", message: expect.any(String) },
        { path: "body.colour", message: "unknown field" },
      ]),
    );
  });

  it("400 for malformed JSON and for a bad query parameter", async () => {
    const res = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites",
      headers: { "content-type": "application/json" },
      payload: "{nope",
    });
    expectProblem(res, 400, "malformed_json");
    const q = await hub.app.inject({ url: "/api/v1/sites?limit=5000" });
    const body = expectProblem(q, 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "querystring.limit", message: expect.any(String) }]);
    const c = await hub.app.inject({ url: "/api/v1/sites?cursor=garbage" });
    expectProblem(c, 400, "invalid_cursor");
  });

  it("404 for an unknown route and for an unknown id, 400 for a malformed id", async () => {
    expectProblem(await hub.app.inject({ url: "/api/v1/nothing-here" }), 404, "route_not_found");
    expectProblem(
      await hub.app.inject({ url: "/api/v1/sites/0190a5b4-0000-7000-8000-000000000000/" }),
      404,
      "site_not_found",
    );
    expectProblem(await hub.app.inject({ url: "/api/v1/sites/not-a-uuid" }), 400, "validation_failed");
  });

  it("405 with an Allow header for a known path and another method", async () => {
    const res = await hub.app.inject({ method: "PUT", url: "/api/v1/sites/" });
    expectProblem(res, 405, "method_not_allowed");
    expect(String(res.headers.allow).split(", ").sort()).toEqual(["GET", "HEAD", "POST"]);
  });

  it("409 for a duplicate slug", async () => {
    const first = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites",
      payload: { slug: "dup-site", name: "A" },
    });
    expect(first.statusCode).toBe(201);
    const body = expectProblem(
      await hub.app.inject({ method: "POST", url: "/api/v1/sites", payload: { slug: "dup-site", name: "B" } }),
      409,
      "site_slug_taken",
    );
    expect(body.detail).toContain("dup-site");
  });

  it("412 for a stale If-Match", async () => {
    const site = (
      await hub.app.inject({ method: "POST", url: "/api/v1/sites", payload: { slug: "etag-site", name: "E" } })
    ).json<{ id: string }>();
    const res = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      headers: { "if-match": '"stale"' },
      payload: { name: "F" },
    });
    expectProblem(res, 412, "etag_mismatch");
  });

  it("413 above the configured body limit, and nothing is written", async () => {
    const res = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites",
      payload: { slug: "big", name: "x".repeat(70 * 1024) },
    });
    expectProblem(res, 413, "payload_too_large");
    expect(await hub.db.prisma.site.count({ where: { slug: "big" } })).toBe(0);
  });

  it("415 for a body that is not JSON", async () => {
    const res = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites",
      headers: { "content-type": "text/plain" },
      payload: "slug=x",
    });
    expectProblem(res, 415, "unsupported_media_type");
  });

  it("500 is opaque, carries the request id, and the cause is logged", async () => {
    const res = await hub.app.inject({ url: "/test/boom", headers: { "x-request-id": "req-boom-1" } });
    const body = expectProblem(res, 500, "internal_error");
    expect(res.headers["x-request-id"]).toBe("req-boom-1");
    expect(JSON.stringify(body)).not.toContain("postgres://");
    expect(body.detail).toContain("req-boom-1");
    const logged = hub.logs.find((l) => l.requestId === "req-boom-1" && l.level === "ERROR");
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toContain("leaked?");
  });
});

describe("request ids", () => {
  it("honours a well-formed X-Request-Id, replaces a malformed one, and logs it", async () => {
    const ok = await hub.app.inject({ url: "/healthz", headers: { "x-request-id": "abc-123" } });
    expect(ok.headers["x-request-id"]).toBe("abc-123");
    expect(hub.logs.some((l) => l.requestId === "abc-123")).toBe(true);
    const bad = await hub.app.inject({ url: "/healthz", headers: { "x-request-id": "has spaces\n" } });
    expect(bad.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const none = await hub.app.inject({ url: "/healthz" });
    expect(none.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("trace ids and log levels the runbook's log searches rely on", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const linesOf = (requestId: string) => hub.logs.filter((l) => l.requestId === requestId);

  it("a caller's traceparent is honoured: in problem+json beside requestId and on every log line of the request", async () => {
    const res = await hub.app.inject({
      url: "/test/boom",
      headers: { "x-request-id": "req-trace-1", traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
    });
    const body = expectProblem(res, 500, "internal_error");
    expect(body).toMatchObject({ requestId: "req-trace-1", traceId: TRACE });
    const lines = linesOf("req-trace-1");
    // Fastify's "incoming request", the error with its cause, "request completed".
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["incoming request", "request completed"]));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect(l.trace_id).toBe(TRACE);
    expect(lines.find((l) => JSON.stringify(l).includes("leaked?"))).toMatchObject({ level: "ERROR" });
  });

  it("without a usable traceparent the hub makes a trace id per request, and levels are words", async () => {
    const a = await hub.app.inject({ url: "/api/v1/sites/not-a-uuid", headers: { "x-request-id": "req-trace-2" } });
    const b = await hub.app.inject({
      url: "/api/v1/sites/not-a-uuid",
      headers: { "x-request-id": "req-trace-3", traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` },
    });
    const traceA = a.json<{ traceId: string }>().traceId;
    const traceB = b.json<{ traceId: string }>().traceId;
    expect(traceA).toMatch(/^[0-9a-f]{32}$/);
    expect(traceB).toMatch(/^[0-9a-f]{32}$/);
    expect(traceB).not.toBe("0".repeat(32));
    expect(traceA).not.toBe(traceB);
    for (const l of linesOf("req-trace-2")) expect(l.trace_id).toBe(traceA);
    for (const l of linesOf("req-trace-3")) expect(l.trace_id).toBe(traceB);
    expect(new Set(hub.logs.map((l) => l.level))).toEqual(new Set(["INFO", "ERROR"]));
  });
});
