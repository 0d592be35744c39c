/**
 * The README's quick start: `npm start` on a checkout without a built UI serves the UI at /ui/.
 * Runs `npm start` itself (the package.json script a newcomer runs), on a fresh database, with
 * FM_WEB_DIR pointing at an empty directory, so the start's own build step is what fills it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { freePort } from "@fm/test-support/ports";
import { ADMIN_SECRET, REPO_ROOT, TEST_KEK, onJsonLines } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";

let db: TestDatabase;
let webDir: string;
let start: ChildProcess | undefined;
const logs: Record<string, unknown>[] = [];
const text: string[] = [];
let url = "";

beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  webDir = await mkdtemp(join(tmpdir(), "fm-web-empty-"));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  start = spawn("npm", ["start"], {
    cwd: REPO_ROOT,
    // Its own process group: npm, its shell and the hub stop together.
    detached: true,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: db.url,
      PORT: String(port),
      FM_WEB_DIR: webDir,
      FM_BOOTSTRAP_ADMIN_SECRET: ADMIN_SECRET,
      FM_KEY_ENCRYPTION_KEY: TEST_KEK,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [start.stdout!, start.stderr!])
    onJsonLines(
      stream,
      (l) => logs.push(l),
      (t) => text.push(t),
    );
  await eventually(
    async () =>
      expect(
        logs.some((l) => l.msg === "hub ready"),
        text.join("\n"),
      ).toBe(true),
    170_000,
    500,
  );
}, 180_000);
afterAll(async () => {
  if (start?.pid && start.exitCode === null) {
    const exited = new Promise((r) => start!.on("exit", r));
    process.kill(-start.pid, "SIGTERM");
    await exited;
  }
  await db?.drop();
  await rm(webDir, { recursive: true, force: true });
}, 60_000);

describe("npm start on a checkout without a built UI", { timeout: 60_000 }, () => {
  it("builds the UI, says so, and serves it at /ui/ with precompressed assets", async () => {
    const said = logs.map((l) => String(l.msg)).filter((m) => m.startsWith("web UI:"));
    expect(said).toContainEqual(expect.stringMatching(/^web UI: the build in .* was missing: built it in [\d.]+ s$/));

    const index = await fetch(`${url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await index.text();
    const script = html.match(/src="(\/ui\/assets\/index-[^"]+\.js)"/)?.[1];
    expect(script).toBeDefined();

    // The browser's usual header: the build's brotli variant; without one, the script as built.
    const br = await fetch(`${url}${script}`, { headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.status).toBe(200);
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toBe("accept-encoding");
    const body = await br.text(); // fetch decodes brotli
    const plain = await fetch(`${url}${script}`, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(body);

    const assets = await readdir(join(webDir, "assets"));
    expect(assets).toContain(script!.split("/").pop()! + ".br");
    expect(assets).toContain(script!.split("/").pop()! + ".gz");
  });
});
