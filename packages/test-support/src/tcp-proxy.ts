/**
 * A TCP proxy in front of a real server, to make it unreachable and reachable again without
 * stopping it: `cut()` drops every connection and refuses new ones; `restore()` listens again
 * on the same port. `retarget()` points it at another server (or at none: connections are then
 * dropped as they arrive), so a server that restarts on a new port keeps one address.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { eventually } from "./wait.ts";

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  retarget(target: { host: string; port: number } | undefined): void;
  close(): Promise<void>;
}

/** A proxy to targetHost:targetPort, or to nothing yet (see retarget) when no target is given. */
export async function startTcpProxy(targetHost?: string, targetPort?: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let target = targetHost && targetPort ? { host: targetHost, port: targetPort } : undefined;

  const listenOnce = () =>
    new Promise<void>((resolve, reject) => {
      const srv = createServer((client) => {
        if (!target) return void client.destroy();
        const upstream = connect(target.port, target.host);
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
  // Listening again on the port it had: another process may hold it for a moment meanwhile.
  const listen = () => eventually(listenOnce, 10_000, 100);

  const cut = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    const srv = server;
    server = undefined;
    if (srv) await new Promise<void>((r) => srv.close(() => r()));
  };

  await listenOnce(); // port 0: the OS picks a free one
  return {
    port,
    cut,
    restore: listen,
    retarget: (t) => {
      target = t;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: cut,
  };
}
