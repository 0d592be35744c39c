/**
 * Requests refused before any route runs (a path that does not decode, a path parameter over
 * its length, headers over the limit, bytes that are not HTTP), sent over raw sockets: each
 * answer is problem+json like every other error, and closes the connection where it cannot go on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";

let hub: TestHub;
let port: number;
beforeAll(async () => {
  hub = await startTestHub();
  port = Number(new URL(await hub.app.listen({ port: 0, host: "127.0.0.1" })).port);
});
afterAll(() => hub.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The server ended the connection after this response. */
  closed: boolean;
}

/**
 * Writes `request` as it is and reads one response; with `untilClosed`, waits for the server to
 * end the connection too (and fails by the test's timeout if it never does).
 */
function raw(request: string, untilClosed = false): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    let closed = false;
    const finish = () => {
      const split = data.indexOf("\r\n\r\n");
      if (split < 0) return false;
      const [statusLine, ...lines] = data.slice(0, split).split("\r\n");
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      const body = data.slice(split + 4);
      if (Buffer.byteLength(body) < Number(headers["content-length"] ?? Infinity)) return false;
      if (untilClosed && !closed) return false;
      socket.destroy();
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body), closed });
      return true;
    };
    socket.on("data", (chunk) => {
      data += chunk.toString();
      finish();
    });
    socket.on("end", () => {
      closed = true;
      if (!finish()) reject(new Error(`incomplete response: ${JSON.stringify(data)}`));
    });
    // A server that refuses a large request may reset the connection while it is still being
    // written: what it answered before is the response.
    socket.on("error", (err) => {
      closed = true;
      if (!finish()) reject(err);
    });
    socket.write(request);
  });
}

function expectProblem(res: RawResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, title: expect.any(String), detail: expect.any(String) });
  expect(res.body.requestId).toBe(res.headers["x-request-id"]);
}

describe("errors before any route are problem+json", () => {
  it("a path that is not valid percent-encoding is 400 bad_url", async () => {
    const res = await raw("GET /api/v1/devices/%E0%A4%A HTTP/1.1\r\nHost: hub\r\n\r\n");
    expectProblem(res, 400, "bad_url");
  });

  it("a path parameter longer than any id is 414", async () => {
    const res = await raw(`GET /api/v1/devices/${"a".repeat(500)} HTTP/1.1\r\nHost: hub\r\n\r\n`);
    expectProblem(res, 414, "uri_too_long");
  });

  it("headers over the limit are 431, and the connection closes", async () => {
    const res = await raw(`GET /api/v1/sites HTTP/1.1\r\nHost: hub\r\nX-Big: ${"b".repeat(64 * 1024)}\r\n\r\n`, true);
    expectProblem(res, 431, "headers_too_large");
    expect(res.headers.connection).toBe("close");
    expect(res.closed).toBe(true);
  });

  it("bytes that are not HTTP are 400 malformed_http, and the connection closes", async () => {
    const res = await raw("HELLO THERE\r\n\r\n", true);
    expectProblem(res, 400, "malformed_http");
    expect(res.headers.connection).toBe("close");
    expect(res.closed).toBe(true);
  });
});
