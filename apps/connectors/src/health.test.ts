import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import { pino } from "pino";
import { Registry } from "prom-client";
import { listen } from "./health.ts";

let server: Server;
let url: string;
let state: () => Promise<{ ready: boolean; body: Record<string, unknown> }>;
beforeAll(async () => {
  server = await listen(0, "127.0.0.1", new Registry(), () => state(), pino({ level: "silent" }));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("the connector's health port", () => {
  it("stays live when its database cannot be read (a restart would not help), and is not ready", async () => {
    state = () => Promise.reject(new Error("connection refused"));
    const live = await fetch(`${url}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok", ready: false, stats: "unavailable" });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
  });

  it("reports the delivery state, and ready once the feed has been read", async () => {
    state = () => Promise.resolve({ ready: true, body: { undelivered: 3, deadLetters: 1 } });
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({
      status: "ok",
      ready: true,
      undelivered: 3,
      deadLetters: 1,
    });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});
