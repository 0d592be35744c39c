/**
 * fleetctl on the rest of the API, as the binary against a real hub: sites with If-Match,
 * satellites and their secrets, machine clients, SLURM bootstrap configs with user data from a file, the feed,
 * discrepancies, the NetBox pre-rollout check against the NetBox test server, and job wait's
 * progress bar on a terminal (a pseudo-terminal from script(1)).
 */
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InventoryEvent, Job, Site, SlurmBootstrapConfig } from "@fm/domain";
import { clientToken } from "@fm/test-support/process";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { BIN, startFleetctlEnv, type FleetctlEnv } from "./fleetctl-env.ts";

const NETBOX_TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = {
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
};

let e: FleetctlEnv;
let nb: NetboxServer;
beforeAll(async () => {
  nb = await startNetboxServer({ token: NETBOX_TOKEN, data: realisticFleet({ sites: 1, devicesPerSite: 12 }) });
  e = await startFleetctlEnv({
    FM_NETBOX_DEVICE_FILTERS: JSON.stringify([{ site: "iad1", clusters: ["iad1-compute"] }]),
    FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify(MAPPING),
  });
  for (const args of [
    [
      "config",
      "set-profile",
      "e2e",
      "--hub",
      e.hub.url,
      "--client-id",
      "fleet-admin",
      "--client-secret-file",
      e.adminSecretFile,
    ],
    ["api", "login", "--scope", "admin"],
  ]) {
    const r = await e.fleetctl(args);
    expect(r.code, r.stderr).toBe(0);
  }
}, 120_000);
afterAll(async () => {
  await e?.stop();
  await nb?.stop();
}, 60_000);

/** A shell command run on a pseudo-terminal (script(1)); its stdout is what the terminal showed. */
const onTerminal = (cmd: string, env: Record<string, string> = {}) =>
  spawnSync("script", ["-qec", cmd, "/dev/null"], {
    env: { PATH: process.env.PATH, TERM: "xterm", HOME: e.home, XDG_CONFIG_HOME: join(e.home, "config"), ...env },
    encoding: "utf8",
  });

const json = async <T>(args: string[]): Promise<T> => {
  const r = await e.fleetctl([...args, "-o", "json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
};

describe("resources", { timeout: 120_000 }, () => {
  it("sites: create, update with the ETag read first, and a stale one refused", async () => {
    const site = await json<Site>(["api", "site", "create", "--slug", "fra1", "--name", "Frankfurt 1"]);
    expect(site).toMatchObject({ slug: "fra1", name: "Frankfurt 1", region: null, version: 1 });
    const updated = await json<Site>([
      "api",
      "site",
      "update",
      "fra1",
      "--region",
      "eu-central",
      "--slurm-enabled",
      "true",
    ]);
    expect(updated).toMatchObject({ region: "eu-central", slurmEnabled: true, version: 2 });
    const stale = await e.fleetctl(["api", "site", "update", "fra1", "--name", "x", "--if-match", `"${site.id}.1"`]);
    expect(stale.code).toBe(5);
    expect(stale.stderr).toContain("412 etag_mismatch");
    const taken = await e.fleetctl(["api", "site", "create", "--slug", "fra1", "--name", "again"]);
    expect(taken.code).toBe(5);
    expect(taken.stderr).toContain("409 site_slug_taken");
    expect((await e.fleetctl(["api", "site", "delete", "fra1"])).code).toBe(0);
    expect((await e.fleetctl(["api", "site", "get", "fra1"])).code).toBe(3);
    // keflavik and stavanger, and iad1 that the hub's NetBox settings created.
    expect(await e.fleetctl(["api", "site", "list", "--format", "count"])).toMatchObject({ code: 0, stdout: "3\n" });
  });

  it("satellites: secrets shown once on create and rotation; a revoked agent can no longer get a token", async () => {
    const sat = await json<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>([
      "api",
      "satellite",
      "create",
      "res-sat",
      "--site",
      "keflavik",
      "--env",
      "stg",
    ]);
    const slurm = sat.secrets.find((s) => s.agent === "slurm")!;
    const rotated = await json<{ clientSecret: string; previousSecretValidUntil: string }>([
      "api",
      "satellite",
      "rotate-secret",
      "res-sat",
      "--agent",
      "slurm",
    ]);
    expect(rotated.clientSecret).not.toBe(slurm.clientSecret);
    await expect(clientToken(e.hub.url, slurm.clientId, rotated.clientSecret)).resolves.toBeTruthy();

    const table = await e.fleetctl(["api", "satellite", "get", "res-sat"]);
    expect(table.stdout).toMatch(/^NAME\s+ENV\s+SITES\s+AGENTS/);
    expect(table.stdout).toContain(slurm.clientId);
    expect(table.stdout).not.toContain(rotated.clientSecret);

    const revoked = await e.fleetctl(["api", "satellite", "revoke", "res-sat", "--agent", "slurm"]);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expect(clientToken(e.hub.url, slurm.clientId, rotated.clientSecret)).rejects.toThrow(/401/);
    expect((await e.fleetctl(["api", "satellite", "rotate-secret", "res-sat", "--agent", "slurm"])).code).toBe(5);
  });

  it("machine clients: secret shown once on create and rotation; read scope only; revoked at once; agents refused", async () => {
    const created = await e.fleetctl([
      "api",
      "client",
      "create",
      "res-connector",
      "--scope",
      "read-only",
      "--description",
      "a connector instance",
      "-o",
      "json",
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain("shown once");
    const client = JSON.parse(created.stdout) as { clientId: string; scopes: string[]; clientSecret: string };
    expect(client).toMatchObject({ clientId: "res-connector", scopes: ["fleet.read"] });
    const token = await clientToken(e.hub.url, "res-connector", client.clientSecret);
    const write = await fetch(`${e.hub.url}/api/v1/sites`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ slug: "not-mine", name: "x" }),
    });
    expect(write.status).toBe(403);

    const rotated = await json<{ clientSecret: string }>(["api", "client", "rotate-secret", "res-connector"]);
    expect(rotated.clientSecret).not.toBe(client.clientSecret);
    await expect(clientToken(e.hub.url, "res-connector", rotated.clientSecret)).resolves.toBeTruthy();

    const table = await e.fleetctl(["api", "client", "list"]);
    expect(table.stdout).toMatch(/^CLIENT ID\s+KIND\s+SCOPES/);
    expect(table.stdout).toContain("res-connector");
    expect(table.stdout).not.toContain(rotated.clientSecret);
    const one = await json<{ lastTokenAt: string | null; description: string }>([
      "api",
      "client",
      "get",
      "res-connector",
    ]);
    expect(one).toMatchObject({ description: "a connector instance" });
    expect(one.lastTokenAt).not.toBeNull();
    // Shown once: no later read carries either secret, in any format.
    for (const format of ["json", "yaml", "wide"]) {
      const read = await e.fleetctl(["api", "client", "get", "res-connector", "-o", format]);
      expect(read.code, read.stderr).toBe(0);
      for (const secret of [client.clientSecret, rotated.clientSecret]) expect(read.stdout).not.toContain(secret);
      expect(read.stdout).not.toMatch(/clientSecret/i);
    }

    const taken = await e.fleetctl(["api", "client", "create", "res-connector", "--scope", "admin"]);
    expect(taken.code).toBe(5);
    expect(taken.stderr).toContain("409 client_id_taken");
    const bad = await e.fleetctl(["api", "client", "create", "Res_Connector", "--scope", "read-only"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("client id");
    const bootstrap = await e.fleetctl(["api", "client", "revoke", "fleet-admin"]);
    expect(bootstrap.code).toBe(5);
    expect(bootstrap.stderr).toContain("bootstrap_client");
    // A satellite agent's client is not a machine client: revoking or rotating it here is
    // refused and names where it is managed, and the agent keeps its access.
    const sat = await json<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>([
      "api",
      "satellite",
      "create",
      "res-sat-clients",
      "--site",
      "keflavik",
      "--env",
      "stg",
    ]);
    const health = sat.secrets.find((x) => x.agent === "health-status")!;
    for (const verb of ["revoke", "rotate-secret"]) {
      const refusedAgent = await e.fleetctl(["api", "client", verb, health.clientId]);
      expect(refusedAgent.code, verb).toBe(5);
      expect(refusedAgent.stderr, verb).toContain("agent_client");
      expect(refusedAgent.stderr, verb).toContain("/api/v1/satellites/");
    }
    await expect(clientToken(e.hub.url, health.clientId, health.clientSecret)).resolves.toBeTruthy();

    const revoked = await e.fleetctl(["api", "client", "revoke", "res-connector"]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await fetch(`${e.hub.url}/api/v1/sites`, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
    await expect(clientToken(e.hub.url, "res-connector", rotated.clientSecret)).rejects.toThrow(/401/);
  });

  it("SLURM bootstrap configs: user data read from a file and sent base64; too large a file refused before sending", async () => {
    const file = join(e.home, "cloud-init.yaml");
    const userData = "#cloud-config\nruncmd:\n  - echo 'joined'\n";
    await writeFile(file, userData);
    const cfg = await json<SlurmBootstrapConfig>([
      "api",
      "slurm-config",
      "create",
      "--site",
      "keflavik",
      "--role",
      "gpu-node",
      "--image",
      "ubuntu-24.04",
      "--flavor",
      "gpu.h100.8",
      "--gres",
      "gpu:h100:8",
      "--user-data-file",
      file,
    ]);
    expect(cfg).toMatchObject({ image: "ubuntu-24.04", gres: "gpu:h100:8" });
    expect(Buffer.from(cfg.userData!, "base64").toString()).toBe(userData);

    const replaced = await json<SlurmBootstrapConfig>([
      "api",
      "slurm-config",
      "replace",
      cfg.id,
      "--site",
      "keflavik",
      "--image",
      "ubuntu-26.04",
      "--flavor",
      "gpu.h100.8",
    ]);
    expect(replaced).toMatchObject({ image: "ubuntu-26.04", gres: null, userData: null, version: cfg.version + 1 });

    const big = join(e.home, "big.yaml");
    await writeFile(big, "x".repeat(64 * 1024 + 1));
    const refused = await e.fleetctl([
      "--hub",
      "http://127.0.0.1:9",
      "api",
      "slurm-config",
      "create",
      "--site",
      "keflavik",
      "--role",
      "gpu-node",
      "--image",
      "i",
      "--flavor",
      "f",
      "--user-data-file",
      big,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("at most 65536 are allowed");
    const badGres = await e.fleetctl([
      "api",
      "slurm-config",
      "create",
      "--site",
      "keflavik",
      "--role",
      "cpu-node",
      "--image",
      "i",
      "--flavor",
      "f",
      "--gres",
      "gpu h100",
    ]);
    expect(badGres.code).toBe(2);
    expect(badGres.stderr).toContain("--gres");
  });

  it("feed tail shows the latest events, and --follow prints a change as it is committed", async () => {
    const tail = await e.fleetctl(["api", "feed", "tail", "-n", "3", "-o", "json"]);
    expect(tail.code, tail.stderr).toBe(0);
    const events = tail.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as InventoryEvent);
    expect(events).toHaveLength(3);
    const last = Number(events[2]!.position);
    expect(events.map((ev) => Number(ev.position))).toEqual([last - 2, last - 1, last]);
    const after = await e.api<{ items: unknown[] }>(`/api/v1/feeds/inventory/?after=${last}`);
    expect(after.body.items).toEqual([]); // it was the last one

    let seen = "";
    const stop = new AbortController();
    const follow = e.fleetctl(["api", "feed", "tail", "-n", "0", "--follow"], {
      onStdout: (t) => (seen = t),
      signal: stop.signal,
    });
    await new Promise((r) => setTimeout(r, 3000));
    await e.fleetctl(["api", "site", "create", "--slug", "osl1", "--name", "Oslo 1"]);
    const deadline = Date.now() + 30_000;
    while (!seen.includes("site.created") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(seen).toMatch(new RegExp(`^${last + 1}\\s+\\S+\\s+site\\.created\\s+osl1\\n`, "m"));
    stop.abort();
    expect((await follow).code).toBeNull(); // still following when stopped
  });

  it("device list --sort pages in the hub's order, descending with '-'; a sort the API lacks is a usage error", async () => {
    const names = async (args: string[]) => {
      const r = await e.fleetctl(["api", "device", "list", ...args, "-o", "name"]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout
        .trim()
        .split("\n")
        .map((l) => l.replace(/^device\//, ""));
    };
    const hub = async (qs: string) =>
      (await e.api<{ items: { name: string }[] }>(`/api/v1/devices/?${qs}&limit=1000&brief=true`)).body.items.map(
        (d) => d.name,
      );
    const descending = await hub("site=keflavik&sort=-name");
    expect(descending.length).toBeGreaterThan(5);
    expect(await names(["--site", "keflavik", "--sort=-name", "--all"])).toEqual(descending);
    expect(descending).not.toEqual(await hub("site=keflavik"));
    expect(await names(["--sort", "updatedAt", "--limit", "5"])).toEqual((await hub("sort=updatedAt")).slice(0, 5));
    const bad = await e.fleetctl(["api", "device", "list", "--sort", "rack"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--sort");
  });

  it("discrepancy summary and list answer with the hub's figures", async () => {
    const summary = await json<{ total: number; byKind: Record<string, number> }>(["api", "discrepancy", "summary"]);
    expect(summary.byKind).toHaveProperty("unobserved");
    const list = await json<{ count: number }>(["api", "discrepancy", "list", "--site", "keflavik"]);
    const direct = await e.api<{ count: number }>(`/api/v1/sites/${e.inventory.sites.keflavik}/discrepancies/`);
    expect(list.count).toBe(direct.body.count);
    const bad = await e.fleetctl(["api", "discrepancy", "list", "--site", "keflavik", "--kind", "odd"]);
    expect(bad.code).toBe(2);
  });

  it("netbox check takes the cluster and the mapping from the hub's settings", async () => {
    for (const d of nb.data.devices) if (d.status === "planned") d.status = "staged";
    const env = { NETBOX_URL: nb.url, NETBOX_TOKEN };
    const ok = await e.fleetctl(["netbox", "check", "--site", "iad1"], { env });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain("NetBox is ready for this site.");
    nb.data.devices.find((d) => d.site === 1 && d.cluster === 1)!.status = "planned";
    const bad = await e.fleetctl(["netbox", "check", "--site", "iad1", "-o", "json"], { env });
    expect(bad.code).toBe(13);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false });
  });

  it("job wait on a terminal draws a progress bar on stderr", async () => {
    const names = (await e.fleetctl(["api", "device", "list", "--site", "stavanger", "-o", "name", "--limit", "1"]))
      .stdout;
    const job = await json<Job>([
      "api",
      "job",
      "create",
      "--kind",
      "REPAIR",
      "--device",
      names.trim().replace("device/", ""),
      "--param",
      "ticket=T-1",
    ]);
    const cmd = `"${process.execPath}" "${BIN}" api job wait ${job.id} --timeout 2s --interval 500ms`;
    const r = onTerminal(cmd);
    expect(r.status).toBe(12);
    expect(r.stdout).toMatch(/[█░]+ 0% \| PENDING \| -/);
    expect(r.stdout).toContain(`job ${job.name} PENDING 0%`);

    // stdout to a file (or `| tee`) while stderr stays on the terminal: the plain lines go to the
    // file, and no bar is drawn.
    const log = join(e.home, "wait.log");
    const redirected = onTerminal(`${cmd} > "${log}"`);
    expect(redirected.status).toBe(12);
    expect(redirected.stdout).not.toMatch(/[█░]/);
    const lines = await readFile(log, "utf8");
    expect(lines).toContain(`job ${job.name} PENDING 0%\n`);
    // The timeout is an error for the person, on the terminal (stderr), not a line of the log.
    expect(lines).not.toContain("timed out");
    expect(redirected.stdout).toContain(
      `error: timed out waiting for the condition: job ${job.name} still PENDING after 2s (it goes on)`,
    );
  });

  it("a table on a terminal is coloured, and NO_COLOR turns the colour off", () => {
    const cmd = `"${process.execPath}" "${BIN}" api device list --site stavanger --limit 5`;
    const coloured = onTerminal(cmd);
    expect(coloured.status, coloured.stdout).toBe(0);
    expect(coloured.stdout).toContain("\u001b[39m"); // the end of a coloured cell
    const plain = onTerminal(cmd, { NO_COLOR: "1" });
    expect(plain.status, plain.stdout).toBe(0);
    expect(plain.stdout).toMatch(/^NAME\s+SITE\s+STATUS\s+CORDONED/);
    expect(plain.stdout).not.toContain("\u001b[");
  });
});
