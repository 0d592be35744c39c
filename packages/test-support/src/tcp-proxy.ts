/**
 * A TCP proxy in front of a real server, to make it unreachable and reachable again without
 * stopping it: `cut()` drops every connection and refuses new ones; `restore()` listens again
 * on the same port.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const srv = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      srv.once("error", reject);
      srv.listen(port, "127.0.0.1", () => {
        port = (srv.address() as { port: number }).port;
        server = srv;
        resolve();
      });
    });

  const cut = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    const srv = server;
    server = undefined;
    if (srv) await new Promise<void>((r) => srv.close(() => r()));
  };

  await listen();
  return { port, cut, restore: listen, close: cut };
}
