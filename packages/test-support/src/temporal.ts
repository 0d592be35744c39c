/**
 * A real Temporal server for tests: the Temporal CLI's dev server (`temporal server
 * start-dev`, SQLite in a scratch folder), built and started by scripts/peers/temporal.sh.
 * One per test file that needs it, on a free port (another one if that is taken before the
 * server binds it); it is SERVING about a second after start.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./process.ts";
import { freePort } from "./ports.ts";

const run = promisify(execFile);
const SCRIPT = join(REPO_ROOT, "scripts/peers/temporal.sh");

export interface TemporalPeer {
  /** host:port of the gRPC frontend */
  address: string;
  dir: string;
  /** Stops the server but keeps its SQLite state, as an outage of the Temporal service would. */
  pause(): Promise<void>;
  /** Starts it again on the same port and state. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** The port another process took between choosing it and the server binding it. */
const portTaken = (err: unknown) => {
  const e = err as { stdout?: string; stderr?: string };
  return /already in use/i.test(`${e.stdout ?? ""}${e.stderr ?? ""}`);
};

export async function startTemporal(): Promise<TemporalPeer> {
  const dir = await mkdtemp(join(tmpdir(), "fm-temporal-"));
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await run(SCRIPT, ["start", dir, String(port)], { timeout: 90_000 });
      break;
    } catch (err) {
      if (attempt < 3 && portTaken(err)) continue;
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  return {
    address: `127.0.0.1:${port}`,
    dir,
    async pause() {
      await run(SCRIPT, ["stop", dir], { timeout: 30_000 });
    },
    async resume() {
      // Its clients know this address: the same port, waited for while another process holds it.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          return void (await run(SCRIPT, ["start", dir, String(port)], { timeout: 90_000 }));
        } catch (err) {
          if (!portTaken(err) || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
    async stop() {
      await run(SCRIPT, ["stop", dir], { timeout: 30_000 }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
