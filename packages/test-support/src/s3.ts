/**
 * A real S3-compatible server for tests: gofakes3 (built by scripts/peers/s3.sh from the Go
 * module proxy), objects in memory, one bucket created at start. The e2e and integration runs
 * start one for the whole run (s3-global-setup.ts) and hand its address to the tests through
 * vitest's `inject("s3")`; a benchmark starts its own. gofakes3 does not check request
 * signatures: tests of credential handling check what the client sends or logs, not a 403.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.ts";
import { REPO_ROOT } from "./process.ts";

const run = promisify(execFile);
const SCRIPT = join(REPO_ROOT, "scripts/peers/s3.sh");

/** What a client needs to reach the server: the workflow agent's object-storage secret keys. */
export interface S3Endpoint {
  /** S3_ENDPOINT */
  endpoint: string;
  /** BUCKET_NAME */
  bucket: string;
  /** AWS_ACCESS_KEY_ID */
  accessKeyId: string;
  /** AWS_SECRET_ACCESS_KEY */
  secretAccessKey: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's S3 server (s3-global-setup.ts). */
    s3: S3Endpoint;
  }
}

export interface S3Peer extends S3Endpoint {
  stop(): Promise<void>;
}

export async function startS3(bucket = "fm-artifacts"): Promise<S3Peer> {
  const dir = await mkdtemp(join(tmpdir(), "fm-s3-"));
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await run(SCRIPT, ["start", dir, String(port), bucket], { timeout: 60_000 });
      break;
    } catch (err) {
      const text = `${(err as { stderr?: string }).stderr ?? ""}`;
      if (attempt < 3 && /already in use/.test(text)) continue;
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    // Credentials as the bucket's secret would hold them; unique per run, so a test can look for them.
    accessKeyId: `FMTEST${port}`,
    secretAccessKey: `fm-test-secret-${port}-${Math.random().toString(36).slice(2)}`,
    async stop() {
      await run(SCRIPT, ["stop", dir], { timeout: 30_000 }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The keys under `prefix` (ListObjectsV2), read over plain HTTP as a separate client would. */
export async function s3Keys(s: S3Endpoint, prefix: string): Promise<string[]> {
  const res = await fetch(`${s.endpoint}/${s.bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  if (!res.ok) throw new Error(`ListObjectsV2 answered ${res.status}: ${await res.text()}`);
  return [...(await res.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!).sort();
}

/** An object's content, or null when there is none. */
export async function s3Text(url: string): Promise<string | null> {
  const res = await fetch(url);
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return res.text();
}
