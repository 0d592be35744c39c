import { request } from "node:http";
import { chmod, mkdtemp, rm, stat, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, spawnHub, startHub, type HubProcess } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";

/** A caller's W3C trace id (the example of the Trace Context specification). */
const TRACE = "0af7651916cd43dd8448eb211c80319c";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function emptyDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  return db;
}

function track(h: HubProcess): HubProcess {
  cleanups.push(() => h.stop("SIGKILL"));
  return h;
}

describe("hub process", () => {
  it("two hubs started together on an empty database both migrate safely and become ready", async () => {
    const db = await emptyDatabase();
    // Replicas share one issuer URL (the load balancer's), as in production.
    const shared = { DATABASE_URL: db.url, FM_ISSUER_URL: "http://hub.e2e.test" };
    const [a, b] = await Promise.all([startHub(shared), startHub(shared)]);
    track(a);
    track(b);
    for (const h of [a, b]) expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
    // Exactly one of them applied the migrations.
    const appliers = [a, b].filter((h) => h.logs.some((l) => l.msg === "applied database migrations"));
    expect(appliers).toHaveLength(1);
    // They share one database and one signing key: a token from one works on the other, and a
    // write through one is read through the other.
    const token = await clientToken(a.url, "fleet-admin", ADMIN_SECRET);
    const created = await fetch(`${a.url}/api/v1/sites/`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(token) },
      body: JSON.stringify({ slug: "shared", name: "Shared" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await fetch(`${b.url}/api/v1/sites/${id}/`, { headers: bearer(token) })).status).toBe(200);
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);
  });

  it("on SIGTERM finishes the request in flight, refuses new work, and exits 0", async () => {
    const db = await createTestDatabase((await import("vitest")).inject("templateDatabase"));
    cleanups.push(() => db.drop());
    // Exit 0 means the hub finished before its 10 s graceful-shutdown limit (past it, it exits 1).
    const hub = track(await startHub({ DATABASE_URL: db.url, FM_SHUTDOWN_TIMEOUT_MS: "10000" }));
    const { port } = new URL(hub.url);
    const body = JSON.stringify({ slug: "in-flight", name: "Sent slowly" });
    const token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);

    // A request whose body is still arriving when SIGTERM lands.
    let req: ReturnType<typeof request> | undefined;
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req = request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/api/v1/sites/",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...bearer(token) },
        },
        (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, 10));
    });
    const line = (msg: string, match: (l: Record<string, unknown>) => boolean = () => true) =>
      eventually(async () => expect(hub.logs.some((l) => l.msg === msg && match(l))).toBe(true), 10_000, 20);
    // The hub has the request (its headers logged) before the signal is sent.
    await line("incoming request", (l) => (l.req as { url?: string } | undefined)?.url === "/api/v1/sites/");
    hub.proc.kill("SIGTERM");
    await line("shutting down: finishing in-flight requests");
    // New connections are refused while the in-flight request is still open.
    await eventually(async () => {
      const outcome = await fetch(`${hub.url}/healthz`).then(
        (r) => `answered ${r.status}`,
        (e: Error) => String((e.cause as { code?: string } | undefined)?.code ?? e.message),
      );
      expect(outcome).toBe("ECONNREFUSED");
    });
    req!.end(body.slice(10));
    const res = await response;
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ slug: "in-flight" });
    expect(await hub.exited).toBe(0);
    expect(hub.logs.some((l) => l.msg === "stopped")).toBe(true);
    await expect(fetch(`${hub.url}/healthz`)).rejects.toThrow(); // no longer listening
  });

  it("refuses to start on a bad setting, naming it, with a non-zero exit", async () => {
    const h = spawnHub({ PORT: "http", FM_DB_POOL_MAX: "-3" });
    expect(await h.exited).toBe(2);
    const text = h.stderr.join("");
    expect(text).toContain("PORT");
    expect(text).toContain("FM_DB_POOL_MAX");
  });

  it("logs one JSON line per event, the level as a word, carrying the request id and the caller's trace id", async () => {
    const db = await createTestDatabase((await import("vitest")).inject("templateDatabase"));
    cleanups.push(() => db.drop());
    const hub = track(await startHub({ DATABASE_URL: db.url }));
    const unauthenticated = await fetch(`${hub.url}/api/v1/sites/not-a-uuid`, {
      headers: { "x-request-id": "trace-me-41", authorization: "Bearer do-not-log-me" },
    });
    expect(unauthenticated.status).toBe(401); // authentication comes before validation
    const token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const res = await fetch(`${hub.url}/api/v1/sites/not-a-uuid`, {
      headers: { "x-request-id": "trace-me-42", traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, ...bearer(token) },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-request-id")).toBe("trace-me-42");
    expect(await res.json()).toMatchObject({ requestId: "trace-me-42", traceId: TRACE });
    await hub.stop();
    const lines = hub.logs.filter((l) => l.requestId === "trace-me-42");
    expect(lines.length).toBeGreaterThanOrEqual(2); // incoming request, request completed
    for (const l of lines) expect(l.trace_id).toBe(TRACE);
    expect(hub.logs.map((l) => l.level).filter((level) => !["INFO", "WARN", "ERROR"].includes(String(level)))).toEqual(
      [],
    );
    expect(lines.some((l) => (l.res as { statusCode?: number } | undefined)?.statusCode === 400)).toBe(true);
    expect(JSON.stringify(hub.logs)).not.toContain("do-not-log-me");
    expect(JSON.stringify(hub.logs)).not.toContain(token);
  });
});

describe("embedded database (no DATABASE_URL)", () => {
  it("starts a real PostgreSQL in the data folder, keeps data across restarts, and survives a SIGKILL", async () => {
    const parent = await mkdtemp(join(tmpdir(), "fm-embedded-"));
    await chmod(parent, 0o755); // the postgres OS user must reach the data folder inside it
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    const dataDir = join(parent, "data");

    // The quick start as a person runs it: no admin secret or key given, so both are generated.
    const quickStart = { FM_DATA_DIR: dataDir, FM_BOOTSTRAP_ADMIN_SECRET: undefined, FM_KEY_ENCRYPTION_KEY: undefined };
    const first = track(await startHub(quickStart, 120_000));
    expect(first.logs.some((l) => l.msg === "embedded PostgreSQL started")).toBe(true);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    // The generated admin secret is printed once on stderr and kept 0600 in the data folder, never logged.
    const adminSecret = (await readFile(join(dataDir, "fleet-admin.secret"), "utf8")).trim();
    expect((await stat(join(dataDir, "fleet-admin.secret"))).mode & 0o077, "fleet-admin.secret mode").toBe(0);
    expect(first.stderr.join("")).toContain(adminSecret);
    expect(JSON.stringify(first.logs)).not.toContain(adminSecret);
    expect((await fetch(`${first.url}/api/v1/sites`)).status).toBe(401);
    const auth = bearer(await clientToken(first.url, "fleet-admin", adminSecret));
    const created = await fetch(`${first.url}/api/v1/sites`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify({ slug: "persisted", name: "Persisted" }),
    });
    expect(created.status).toBe(201);
    // The generated database password is private to the hub.
    expect((await stat(join(dataDir, "postgres.secret"))).mode & 0o077, "postgres.secret mode").toBe(0);
    const secret = (await readFile(join(dataDir, "postgres.secret"), "utf8")).trim();
    expect(JSON.stringify(first.logs)).not.toContain(secret);

    // A second hub on the same folder would corrupt it: it refuses, naming the holder.
    const intruder = spawnHub(quickStart);
    expect(await intruder.exited).toBe(1);
    expect(JSON.stringify(intruder.logs)).toContain("in use by another hub");

    const firstExit = await first.stop("SIGTERM");
    expect(firstExit, JSON.stringify(first.logs.slice(-5)) + first.stderr.join("").slice(-2000)).toBe(0);

    const second = track(await startHub(quickStart, 60_000));
    // The secret is not printed again; signing keys persisted, but the issuer moved with the port.
    expect(second.stderr.join("")).not.toContain(adminSecret);
    const auth2 = bearer(await clientToken(second.url, "fleet-admin", adminSecret));
    const list = (await (await fetch(`${second.url}/api/v1/sites?slug=persisted`, { headers: auth2 })).json()) as {
      count: number;
    };
    expect(list.count).toBe(1);

    // Killed without a chance to stop its database: the next start cleans up and serves.
    await second.stop("SIGKILL");
    const third = track(await startHub(quickStart, 60_000));
    expect((await fetch(`${third.url}/readyz`)).status).toBe(200);
    const auth3 = bearer(await clientToken(third.url, "fleet-admin", adminSecret));
    expect(
      (
        (await (await fetch(`${third.url}/api/v1/sites?slug=persisted`, { headers: auth3 })).json()) as {
          count: number;
        }
      ).count,
    ).toBe(1);
    const thirdExit = await third.stop("SIGTERM");
    expect(thirdExit, JSON.stringify(third.logs.slice(-5)) + third.stderr.join("").slice(-2000)).toBe(0);
  }, 120_000);
});
