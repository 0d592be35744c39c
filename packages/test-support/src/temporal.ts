/**
 * A real Temporal server for tests: the Temporal CLI's dev server (`temporal server
 * start-dev`, SQLite in a scratch folder), built and started by scripts/peers/temporal.sh.
 * One per test file that needs it, on a free port; it is SERVING about a second after start.
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

export async function startTemporal(): Promise<TemporalPeer> {
  const dir = await mkdtemp(join(tmpdir(), "fm-temporal-"));
  const port = await freePort();
  await run(SCRIPT, ["start", dir, String(port)], { timeout: 90_000 });
  return {
    address: `127.0.0.1:${port}`,
    dir,
    async pause() {
      await run(SCRIPT, ["stop", dir], { timeout: 30_000 });
    },
    async resume() {
      await run(SCRIPT, ["start", dir, String(port)], { timeout: 90_000 });
    },
    async stop() {
      await run(SCRIPT, ["stop", dir], { timeout: 30_000 }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
