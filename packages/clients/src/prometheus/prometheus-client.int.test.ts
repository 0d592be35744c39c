/**
 * The Prometheus client against a real Prometheus (Debian 2.42) under Mimir's /prometheus
 * prefix, through a front that records what the client sent and can answer in its place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrometheus, type PrometheusPeer } from "@fm/test-support/prometheus";
import { startHttpFront, type FrontStep, type HttpFront } from "../testing/http-front.ts";
import { PrometheusApiError, PrometheusClient, PrometheusUnavailableError } from "./prometheus-client.ts";

let prometheus: PrometheusPeer;
let front: HttpFront | undefined;

beforeAll(async () => {
  prometheus = await startPrometheus("global: { scrape_interval: 1s }\n", { routePrefix: "/prometheus" });
}, 60_000);

afterAll(async () => {
  await front?.close();
  await prometheus?.stop();
});

async function through(script: FrontStep[]): Promise<{ client: PrometheusClient; front: HttpFront }> {
  await front?.close();
  const origin = new URL(prometheus.url).origin;
  front = await startHttpFront(origin, script);
  const client = new PrometheusClient({
    baseUrl: `${front.url}/prometheus/`,
    basicAuth: { username: "mimir-login", password: "s3cret" },
    orgId: "site-a",
    backoffMs: 1,
  });
  return { client, front };
}

describe("PrometheusClient", () => {
  it("queries under the prefix with basic auth and the tenant header", async () => {
    const { client, front } = await through([]);
    expect(await client.query('label_replace(vector(3), "device", "gpu-node-01", "", "")')).toEqual([
      { labels: { device: "gpu-node-01" }, value: 3 },
    ]);
    const sent = front.seen.at(-1)!;
    expect(sent.path).toMatch(/^\/prometheus\/api\/v1\/query\?query=/);
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from("mimir-login:s3cret").toString("base64")}`);
    expect(sent.headers["x-scope-orgid"]).toBe("site-a");
  });

  it("refuses a bad query at once, with Prometheus' words and no credential", async () => {
    const { client, front } = await through([]);
    const err = await client.query("sum(").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrometheusApiError);
    expect(err).toMatchObject({ status: 400, errorType: "bad_data" });
    expect((err as Error).message).toMatch(/parse error/);
    expect((err as Error).message).not.toMatch(/s3cret/);
    expect(front.seen).toHaveLength(1);
  });

  it("refuses an expression that is not an instant vector", async () => {
    const { client } = await through([]);
    await expect(client.query("up[1m]")).rejects.toThrow(/returns a matrix, not an instant vector/);
  });

  it("retries a 503 from a gateway, and gives up as unavailable when nothing answers", async () => {
    const { client, front } = await through([503, "forward"]);
    expect(await client.query("vector(1)")).toEqual([{ labels: {}, value: 1 }]);
    expect(front.seen.map((r) => r.answer)).toEqual([503, 200]);

    const { client: cut } = await through(["drop", "drop", "drop"]);
    await expect(cut.query("vector(1)")).rejects.toBeInstanceOf(PrometheusUnavailableError);
  });
});
