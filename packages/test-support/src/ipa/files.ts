/**
 * A plain HTTP file server for deploy tests: the deploy kernel and ramdisk Ironic caches for PXE
 * and the OS images the agent downloads. GET and HEAD with Content-Length and Last-Modified,
 * which Ironic's HttpImageService (ironic/common/image_service.py, 21.4.4) reads on HEAD.
 */
import { createServer, type Server } from "node:http";

export interface FileServer {
  url: string;
  /** Serves `body` at `path` (e.g. "/ipa.kernel") from now on. */
  put(path: string, body: Buffer): string;
  /** "<method> <path>" of every request, in order. */
  requests: string[];
  stop(): Promise<void>;
}

export async function startFileServer(host = "127.0.0.1"): Promise<FileServer> {
  const files = new Map<string, { body: Buffer; modified: Date }>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://files").pathname;
    requests.push(`${req.method} ${path}`);
    const f = files.get(path);
    if (!f || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(f ? 405 : 404, { "Content-Type": "text/plain" });
      res.end(f ? "Method Not Allowed\n" : "Not Found\n");
      return;
    }
    res.writeHead(200, {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(f.body.length),
      "Last-Modified": f.modified.toUTCString(),
    });
    res.end(req.method === "HEAD" ? undefined : f.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const url = `http://${host}:${port}`;
  return {
    url,
    requests,
    put: (path, body) => {
      files.set(path, { body, modified: new Date(Math.floor(Date.now() / 1000) * 1000) });
      return `${url}${path}`;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
