/**
 * What the fleetctl end-to-end tests share: a real hub on its own database with demo devices,
 * a private config directory, and `fleetctl(...)`, which runs the CLI's npm bin as a child
 * process (as an operator's shell would) and returns its exit code and output.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { Device, DeviceList } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { seedInventory, type Inventory } from "@fm/hub/testing";
import { createTestDatabase } from "@fm/test-support/postgres";
import {
  ADMIN_SECRET,
  REPO_ROOT,
  clientToken,
  hubApi,
  startHub,
  type HubApi,
  type HubProcess,
} from "@fm/test-support/process";

export const BIN = join(REPO_ROOT, "apps/fleetctl/bin/fleetctl.js");
export const DEVICES_PER_SITE = 20;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  input?: string;
  /** Called with all of stdout so far, each time more arrives (to act on a live command). */
  onStdout?: (soFar: string) => void;
  /** The same for stderr (prompts). */
  onStderr?: (soFar: string) => void;
  /** Kills the command when aborted (one that runs until interrupted, as `feed tail --follow`). */
  signal?: AbortSignal;
}

export interface FleetctlEnv {
  hub: HubProcess;
  inventory: Inventory;
  /** The admin's API, straight over HTTP (to set up and to check what the CLI did). */
  api: HubApi;
  /** A file holding fleet-admin's secret, as a machine's secret file. */
  adminSecretFile: string;
  /** The hub's database (to play a source that writes what the API cannot, e.g. a NetBox name). */
  databaseUrl: string;
  /** A private home: $HOME and $XDG_CONFIG_HOME of every run. */
  home: string;
  configDir: string;
  fleetctl(args: string[], o?: RunOptions): Promise<Run>;
  stop(): Promise<void>;
}

/**
 * `config set-profile <name>` for fleet-admin as a machine client of `hub` in the dev environment,
 * its secret read from `secretFile`; `extra` adds flags such as `--use`.
 */
export const adminProfileArgs = (name: string, hub: string, secretFile: string, ...extra: string[]): string[] => [
  "config",
  "set-profile",
  name,
  "--hub",
  hub,
  "--env",
  "dev",
  "--client-id",
  "fleet-admin",
  "--client-secret-file",
  secretFile,
  ...extra,
];

/**
 * Keflavik's first 100 devices less those the demo inventory ships cordoned (an RMA in progress):
 * where a test that cordons, or checks a device stays uncordoned, starts. The hub's order is by
 * id, so without this which device a test gets, cordoned or not, changes from run to run.
 */
export async function uncordonedDevices(e: Pick<FleetctlEnv, "api">): Promise<Device[]> {
  const page = await e.api<DeviceList>("/api/v1/devices/?site=keflavik&limit=100");
  return page.body.items.filter((d) => !d.cordoned);
}

export async function startFleetctlEnv(
  hubEnv: Record<string, string> = {},
  devicesPerSite = DEVICES_PER_SITE,
): Promise<FleetctlEnv> {
  const testDb = await createTestDatabase(inject("templateDatabase"));
  const db = createDatabase(testDb.url, { poolMax: 2 });
  const inventory = await seedInventory(db.prisma, devicesPerSite);
  await db.close();
  const hub = await startHub({ DATABASE_URL: testDb.url, ...hubEnv });
  const home = await mkdtemp(join(tmpdir(), "fleetctl-e2e-"));
  const adminSecretFile = join(home, "admin.secret");
  await writeFile(adminSecretFile, `${ADMIN_SECRET}\n`, { mode: 0o600 });
  let token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const api = hubApi(
    () => hub.url,
    () => token,
  );
  // Tokens last 10 minutes; the suite may outlive one.
  const renew = setInterval(
    () => void clientToken(hub.url, "fleet-admin", ADMIN_SECRET).then((t) => (token = t)),
    5 * 60_000,
  );
  const configDir = join(home, "config", "fleetctl");
  return {
    hub,
    inventory,
    api,
    adminSecretFile,
    databaseUrl: testDb.url,
    home,
    configDir,
    fleetctl: (args, o = {}) => run(args, { HOME: home, XDG_CONFIG_HOME: join(home, "config"), ...o.env }, o.input, o),
    stop: async () => {
      clearInterval(renew);
      await hub.stop();
      await testDb.drop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

export function run(
  args: string[],
  env: Record<string, string>,
  input?: string,
  watch: Pick<RunOptions, "onStdout" | "onStderr" | "signal"> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...env },
      stdio: ["pipe", "pipe", "pipe"],
      signal: watch.signal,
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      watch.onStdout?.(stdout);
    });
    p.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      watch.onStderr?.(stderr);
    });
    p.on("error", (err) => (err.name === "AbortError" ? undefined : reject(err)));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(input ?? "");
  });
}
