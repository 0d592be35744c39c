/**
 * The packed fleetctl, installed as the README says on a machine without the repository:
 * `npm pack -w apps/fleetctl` (its prepack builds the CLI), `npm install -g` of the tarball into
 * an empty prefix outside the repository (offline: the tarball must need no registry), then the
 * installed `fleetctl` run from a directory outside the repository against a real hub.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "@fm/test-support/process";
import { DEVICES_PER_SITE, adminProfileArgs, startFleetctlEnv, type FleetctlEnv } from "./fleetctl-env.ts";

const exec = promisify(execFile);
let e: FleetctlEnv;
let outside: string;
beforeAll(async () => {
  e = await startFleetctlEnv();
  outside = await mkdtemp(join(tmpdir(), "fleetctl-pack-"));
}, 120_000);
afterAll(async () => {
  await e?.stop();
  if (outside) await rm(outside, { recursive: true, force: true });
}, 60_000);

describe("the packed tarball", { timeout: 240_000 }, () => {
  it("installs into an empty prefix without a registry and runs outside the repository", async () => {
    const packed = await exec("npm", ["pack", "-w", "apps/fleetctl", "--pack-destination", outside, "--json"], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as [
      { filename: string; files: { path: string }[] },
    ];
    const files = info.files.map((f) => f.path);
    expect(files).toContain("bin/fleetctl.js");
    expect(files).toContain("dist/fleetctl.js");
    expect(files.filter((f) => f.startsWith("src/"))).toEqual([]);

    const prefix = join(outside, "prefix");
    const home = join(outside, "home");
    // Only Node itself on PATH: no repository, no npx, nothing else of the checkout's.
    const env = { PATH: `${join(prefix, "bin")}:${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home };
    await exec(
      "npm",
      ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", join(outside, info.filename)],
      { cwd: outside, env: { ...env, npm_config_cache: join(outside, "npm-cache") } },
    );
    // The package brought nothing with it: every library is in its build.
    expect(await readdir(join(prefix, "lib/node_modules"))).toEqual(["@fm"]);
    const installed = JSON.parse(await readFile(join(prefix, "lib/node_modules/@fm/fleetctl/package.json"), "utf8"));
    expect(installed.dependencies ?? {}).toEqual({});

    const fleetctl = (args: string[]) => exec("fleetctl", args, { cwd: outside, env });
    expect((await fleetctl(["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    await fleetctl(adminProfileArgs("ops", e.hub.url, e.adminSecretFile, "--use"));
    await fleetctl(["api", "login", "--scope", "read-only"]);
    expect((await fleetctl(["api", "device", "list", "-o", "count"])).stdout).toBe(`${2 * DEVICES_PER_SITE}\n`);
    const yaml = await fleetctl(["api", "device", "list", "--site", "keflavik", "--limit", "1", "-o", "yaml"]);
    expect(yaml.stdout).toMatch(/^items:\n {2}- id: /);
  });
});
