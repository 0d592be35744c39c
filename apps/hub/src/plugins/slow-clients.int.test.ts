/**
 * Slow and greedy clients (issue 33, finding 5), over real sockets: a request whose headers or
 * body trickle in is answered 408 and closed once its timeout has passed (not before), a
 * reflection push by its agent gets the longer timeout, and the connections over the caps
 * (overall, per address) are closed as they are accepted while the first ones stay served.
 */
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";
import type { Authenticator } from "./request-context.ts";
import type { SlowClientLimits } from "./slow-clients.ts";

const SHORT_MS = 1500;
const LONG_MS = 4000;
/** How early a timeout may not fire, and how late it may: the check is on both sides. */
const EARLY_MARGIN_MS = 100;
const LATE_MARGIN_MS = 1500;

/** An agent for the bearer token `agent`, nobody otherwise. */
const agentOnly: Authenticator = async (request) =>
  request.headers.authorization === "Bearer agent"
    ? {
        id: "ironic-agent-sys1",
        kind: "agent",
        scopes: new Set(),
        agent: { satellite: "sys1", kind: "openstack", siteIds: [] },
      }
    : undefined;

let hub: TestHub | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await hub?.close();
  hub = undefined;
});

async function listen(limits: Partial<SlowClientLimits>): Promise<number> {
  hub = await startTestHub({ authenticate: agentOnly, slowClients: limits });
  await hub.app.listen({ port: 0, host: "127.0.0.1" });
  const address = hub.app.server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

interface Client {
  socket: Socket;
  /** What the server sent so far. */
  received: () => string;
  /** Resolves, with the time, when the server closed the connection. */
  closed: Promise<number>;
}

async function open(port: number, localAddress = "127.0.0.1"): Promise<Client> {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  sockets.push(socket);
  let data = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (data += chunk));
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now())));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("close", () => reject(new Error("closed before connecting")));
  });
  return { socket, received: () => data, closed };
}

/** Sends one byte of `text` every 100 ms until the connection closes. */
function trickle(socket: Socket, text: string): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer);
    socket.write(text[i++ % text.length]!);
  }, 100);
  socket.once("close", () => clearInterval(timer));
}

/** A GET on an open keep-alive connection: the status the server answered. */
async function get(client: Client, path = "/healthz"): Promise<number> {
  const before = client.received().length;
  client.socket.write(`GET ${path} HTTP/1.1\r\nHost: hub\r\n\r\n`);
  for (let i = 0; i < 200; i++) {
    const answer = client.received().slice(before);
    const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
    if (m && /\r\n\r\n/.test(answer)) return Number(m[1]);
    if (client.socket.destroyed) return 0;
    await new Promise((r) => setTimeout(r, 25));
  }
  return -1;
}

/** The time from `start` to the close, checked on both sides of `dueMs`. */
async function expectClosedAfter(client: Client, start: number, dueMs: number): Promise<number> {
  const elapsed = (await client.closed) - start;
  expect(elapsed).toBeGreaterThanOrEqual(dueMs - EARLY_MARGIN_MS);
  expect(elapsed).toBeLessThanOrEqual(dueMs + LATE_MARGIN_MS);
  return elapsed;
}

/** Headers announcing a body of 1,000 bytes (the token endpoint takes at most 8 KiB). */
const headersOf = (method: string, path: string, extra = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: hub\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n${extra}\r\n`;

describe("slow requests", () => {
  it("a body trickled to /oauth/token is answered 408 and closed after FM_REQUEST_TIMEOUT_S, not before", async () => {
    const port = await listen({ requestTimeoutMs: SHORT_MS, slowBodyTimeoutMs: LONG_MS });
    const client = await open(port);
    client.socket.write(headersOf("POST", "/oauth/token"));
    const start = performance.now();
    trickle(client.socket, "grant_type=client_credentials&");
    await expectClosedAfter(client, start, SHORT_MS);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(client.received()).toContain('"code":"request_timeout"');
    expect(hub!.logs.some((l) => l.msg === "request body not received in time: connection closed")).toBe(true);
  });

  it("headers trickled one byte at a time are answered 408 and closed after FM_REQUEST_TIMEOUT_S, not before", async () => {
    const port = await listen({ requestTimeoutMs: SHORT_MS, slowBodyTimeoutMs: LONG_MS });
    const client = await open(port);
    const start = performance.now();
    client.socket.write("GET /healthz HTTP/1.1\r\nHost: hub\r\n");
    trickle(client.socket, "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    await expectClosedAfter(client, start, SHORT_MS);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("an agent's reflection push has FM_REFLECTION_REQUEST_TIMEOUT_S for its body; refused callers keep the short one", async () => {
    const port = await listen({ requestTimeoutMs: SHORT_MS, slowBodyTimeoutMs: LONG_MS });
    const path = "/api/v1/sites/00000000-0000-4000-8000-000000000000/reflections/ironic-x";
    const agent = await open(port);
    const stranger = await open(port);
    agent.socket.write(
      headersOf("PUT", path, "Authorization: Bearer agent\r\n").replace("x-www-form-urlencoded", "json"),
    );
    stranger.socket.write(headersOf("PUT", path).replace("x-www-form-urlencoded", "json"));
    const start = performance.now();
    trickle(agent.socket, '{"items":[');
    trickle(stranger.socket, '{"items":[');
    // The stranger is refused at once, and its connection closed when its short timeout is up.
    await expectClosedAfter(stranger, start, SHORT_MS);
    expect(stranger.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(agent.socket.destroyed).toBe(false);
    await expectClosedAfter(agent, start, LONG_MS);
    expect(agent.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a request whose body arrives in time is served as before, and a keep-alive connection stays usable", async () => {
    const port = await listen({ requestTimeoutMs: SHORT_MS, slowBodyTimeoutMs: LONG_MS });
    const client = await open(port);
    const body = "grant_type=client_credentials&client_id=nobody&client_secret=wrong";
    client.socket.write(
      `POST /oauth/token HTTP/1.1\r\nHost: hub\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    // Past the body timeout, the connection answers the next request.
    await new Promise((r) => setTimeout(r, SHORT_MS + 500));
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(await get(client)).toBe(200);
  });
});

describe("connection caps", () => {
  it("closes the connections over FM_MAX_CONNECTIONS_PER_ADDRESS and FM_MAX_CONNECTIONS; the first ones stay served", async () => {
    const port = await listen({ maxConnections: 3, maxConnectionsPerAddress: 2 });
    const a1 = await open(port, "127.0.0.1");
    const a2 = await open(port, "127.0.0.1");
    expect([await get(a1), await get(a2)]).toEqual([200, 200]);
    // A third from the same address: closed as it is accepted, nothing answered.
    const a3 = await open(port, "127.0.0.1");
    a3.socket.write("GET /healthz HTTP/1.1\r\nHost: hub\r\n\r\n");
    await a3.closed;
    expect(a3.received()).toBe("");
    // Another address may open one more: three in all.
    const b1 = await open(port, "127.0.0.2");
    expect(await get(b1)).toBe(200);
    const c1 = await open(port, "127.0.0.3");
    c1.socket.write("GET /healthz HTTP/1.1\r\nHost: hub\r\n\r\n");
    await c1.closed;
    expect(c1.received()).toBe("");
    expect([await get(a1), await get(a2), await get(b1)]).toEqual([200, 200, 200]);
    const metrics = (await hub!.app.inject({ url: "/metrics" })).body;
    expect(metrics).toMatch(/^fleet_manager_http_connections_refused_total\{limit="address"\} 1$/m);
    expect(metrics).toMatch(/^fleet_manager_http_connections_refused_total\{limit="overall"\} 1$/m);
    // A closed connection frees its place.
    a1.socket.destroy();
    await a1.closed;
    await new Promise((r) => setTimeout(r, 100));
    const a4 = await open(port, "127.0.0.1");
    expect(await get(a4)).toBe(200);
  });

  it("a trusted proxy's connections count only against the overall cap", async () => {
    const port = await listen({ maxConnections: 3, maxConnectionsPerAddress: 1, trustedProxies: ["127.0.0.1"] });
    const clients = [await open(port), await open(port), await open(port)];
    expect(await Promise.all(clients.map((c) => get(c)))).toEqual([200, 200, 200]);
    const fourth = await open(port);
    await fourth.closed;
    expect(fourth.received()).toBe("");
  });
});
