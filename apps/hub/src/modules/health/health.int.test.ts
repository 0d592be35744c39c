import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@fm/test-support/wait";
import { startProxiedTestHub, startTestHub, type TestHub } from "../../testing/test-hub.ts";

describe("/healthz and /readyz", () => {
  let hub: Awaited<ReturnType<typeof startProxiedTestHub>>;
  beforeAll(async () => {
    // The hub reaches its database through a proxy the test can cut.
    hub = await startProxiedTestHub({ readinessTimeoutMs: 500 });
  });
  afterAll(() => hub.close());

  it("is ready, goes 503 while the database is unreachable, and recovers by itself", async () => {
    expect((await hub.app.inject({ url: "/readyz" })).statusCode).toBe(200);

    await hub.proxy.cut();
    const down = await hub.app.inject({ url: "/readyz" });
    expect(down.statusCode).toBe(503);
    expect(down.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(down.json()).toMatchObject({ status: 503, code: "database_unavailable" });
    // Liveness does not depend on the database: restarting the hub would not help.
    expect((await hub.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    // An API call fails cleanly too: 503 problem+json with Retry-After, no hang, no internals.
    const api = await hub.app.inject({ url: "/api/v1/sites" });
    expect(api.statusCode).toBe(503);
    expect(api.headers["retry-after"]).toBe("5");
    expect(api.json()).toMatchObject({ code: "database_unavailable" });
    expect(api.body).not.toContain("127.0.0.1");

    await hub.proxy.restore();
    await eventually(async () => expect((await hub.app.inject({ url: "/readyz" })).statusCode).toBe(200), 5000, 100);
    expect((await hub.app.inject({ url: "/api/v1/sites" })).statusCode).toBe(200);
  });
});

describe("/metrics", () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub();
  });
  afterAll(() => hub.close());

  it("counts requests by route template, never by raw URL, with durations", async () => {
    const ids = ["0190a5b4-0000-7000-8000-000000000001", "0190a5b4-0000-7000-8000-000000000002"];
    for (const id of ids) await hub.app.inject({ url: `/api/v1/sites/${id}` });
    await hub.app.inject({ url: "/api/v1/sites" });
    await hub.app.inject({ url: "/no/such/route/123" });
    const res = await hub.app.inject({ url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/sites/:id",status="404"} 2');
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/sites",status="200"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/sites\/:id",status="404"\} \d+/,
    );
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
    for (const id of ids) expect(text).not.toContain(id);
    expect(text).not.toContain("/no/such/route");
  });
});
