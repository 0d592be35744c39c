/**
 * Issue 33 (11): a secret sent in a URL's query is never logged in clear. The request log's
 * `req.url`, and any other line that carries the URL (an error's message or stack, a field of
 * its own), shows `name=[redacted]` for each credential-bearing query parameter.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";
import { hubLogger } from "../lib/log.ts";

/** A distinct value for each parameter that must never be logged. */
const SECRETS = {
  client_secret: "s3cret-client",
  access_token: "s3cret-access",
  refresh_token: "s3cret-refresh",
  code: "s3cret-code",
  code_verifier: "s3cret-verifier",
  password: "s3cret-password",
  token: "s3cret-token",
};
const query = `grant_type=client_credentials&client_id=x&${new URLSearchParams(SECRETS).toString()}`;

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
  await hub.app.ready();
});
afterAll(() => hub.close());

/** The lines a request logged (its request id), as JSON text. */
function linesOf(requestId: string): string[] {
  return hub.logs.filter((l) => l.requestId === requestId).map((l) => JSON.stringify(l));
}

function expectRedacted(lines: string[]) {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) for (const value of Object.values(SECRETS)) expect(line).not.toContain(value);
}

describe("secrets in a URL's query", () => {
  it("GET /oauth/token?…client_secret=… is 405 and its request log shows client_secret=[redacted]", async () => {
    const res = await hub.app.inject({ url: `/oauth/token?${query}` });
    expect(res.statusCode).toBe(405);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const requestId = String(res.headers["x-request-id"]);
    const lines = linesOf(requestId);
    expectRedacted(lines);
    const incoming = hub.logs.find((l) => l.requestId === requestId && l.msg === "incoming request") as
      { req: { url: string } } | undefined;
    expect(incoming?.req.url).toContain("client_id=x");
    for (const name of Object.keys(SECRETS)) expect(incoming?.req.url).toContain(`${name}=[redacted]`);
  });

  it("an unknown path with secrets in its query is 404 and logs none of them", async () => {
    const res = await hub.app.inject({ url: `/no/such/path?${query}` });
    expect(res.statusCode).toBe(404);
    expectRedacted(linesOf(String(res.headers["x-request-id"])));
  });

  it("any line naming the URL (an error's message and stack, a field, the message) redacts the query", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        cb();
      },
    });
    const log = hubLogger("info", sink).child({ requestId: "r1" });
    const url = `/oauth/authorize?${query}`;
    log.error({ err: new Error(`fetching ${url} failed`), url, target: { href: `https://hub.test${url}#x` } }, url);
    log.warn(`retrying https://hub.test/cb?state=1&code=${SECRETS.code}`);
    expect(lines).toHaveLength(2);
    for (const line of lines) for (const value of Object.values(SECRETS)) expect(line).not.toContain(value);
    const first = JSON.parse(lines[0]!) as { url: string; msg: string; err: { message: string } };
    expect(first.url).toContain("client_secret=[redacted]");
    expect(first.url).toContain("grant_type=client_credentials");
    expect(first.err.message).toContain("code_verifier=[redacted]");
    expect(lines[1]).toContain("state=1&code=[redacted]");
  });
});
