/**
 * An HTTP front for client tests: it stands between a client and a real server, records every
 * request it receives, and answers each as its script says: forward it, answer in the server's
 * place (as a proxy or a load balancer would), or cut the connection before or after forwarding.
 * Tests count what reached the front, and so what the client sent, attempt by attempt.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export type FrontStep =
  /** Pass the request to the server and its answer back. */
  | "forward"
  /** Cut the connection without forwarding: the server never sees the request. */
  | "drop"
  /** Forward, then cut the connection instead of answering: the server acted, the client cannot know. */
  | "forward-then-drop"
  /** Answer this status with an HTML page, as a proxy in front of the server does. */
  | number
  /** Answer exactly this. */
  | { status: number; headers?: Record<string, string>; body?: string };

export interface FrontRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status the client was given, or "dropped"; undefined while in flight. */
  answer?: number | "dropped";
}

export interface HttpFront {
  url: string;
  /** Every request received, in order. */
  seen: FrontRequest[];
  close(): Promise<void>;
}

/** Request headers not passed on: fetch sets its own. */
const REQUEST_HOP = new Set(["host", "connection", "content-length", "accept-encoding", "transfer-encoding"]);
/** Response headers not passed back: the body is re-sent as fetch decoded it. */
const RESPONSE_HOP = new Set(["connection", "keep-alive", "content-length", "content-encoding", "transfer-encoding"]);

/**
 * Starts a front for `target` (e.g. http://127.0.0.1:8080). `script` is a list of steps, one per
 * request in arrival order ("forward" once it runs out), or a function choosing the step of
 * each request (n counts from 0).
 */
export async function startHttpFront(
  target: string,
  script: FrontStep[] | ((req: FrontRequest, n: number) => FrontStep),
): Promise<HttpFront> {
  const seen: FrontRequest[] = [];
  const stepFor = (req: FrontRequest, n: number): FrontStep =>
    typeof script === "function" ? script(req, n) : (script.shift() ?? "forward");
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      const seenReq: FrontRequest = { method: req.method ?? "GET", path: req.url ?? "/", headers, body };
      const n = seen.push(seenReq) - 1;
      answer(target, stepFor(seenReq, n), seenReq, req, res).catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function answer(
  target: string,
  step: FrontStep,
  seen: FrontRequest,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (step === "drop") {
    seen.answer = "dropped";
    req.socket.destroy();
    return;
  }
  if (typeof step === "number")
    step = { status: step, headers: { "content-type": "text/html" }, body: `<h1>${step}</h1>` };
  if (typeof step === "object") {
    seen.answer = step.status;
    res.writeHead(step.status, step.headers ?? {});
    res.end(step.body ?? "");
    return;
  }
  const headers = Object.fromEntries(Object.entries(seen.headers).filter(([k]) => !REQUEST_HOP.has(k)));
  const upstream = await fetch(`${target}${seen.path}`, {
    method: seen.method,
    headers,
    body: seen.body || undefined,
    redirect: "manual",
  });
  const text = await upstream.text();
  if (step === "forward-then-drop") {
    seen.answer = "dropped";
    req.socket.destroy();
    return;
  }
  seen.answer = upstream.status;
  const back: Record<string, string> = {};
  upstream.headers.forEach((v, k) => {
    if (!RESPONSE_HOP.has(k)) back[k] = v;
  });
  res.writeHead(upstream.status, back);
  res.end(text);
}
