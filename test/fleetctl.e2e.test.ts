/**
 * fleetctl end to end: the CLI's npm bin run as a child process against a real hub process on
 * PostgreSQL. Asserted: what an operator sees (stdout, stderr, exit code) and what the hub holds
 * afterwards. Jobs are driven to their end through the job report API, as the site's workflow
 * agent would.
 */
import { chmod, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { Device, DeviceList, Job } from "@fm/domain";
import { WORKFLOW_STEPS } from "@fm/domain/workflows";
import { clientToken, hubApi } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import {
  DEVICES_PER_SITE,
  adminProfileArgs,
  startFleetctlEnv,
  uncordonedDevices,
  type FleetctlEnv,
} from "./fleetctl-env.ts";

let e: FleetctlEnv;
let names: string[];
let active: Set<string>;
beforeAll(async () => {
  e = await startFleetctlEnv();
  const free = await uncordonedDevices(e);
  names = free.map((d) => d.name);
  active = new Set(free.filter((d) => d.netbox.status === "active").map((d) => d.name));
  // Every command below runs with this profile: the hub, and fleet-admin as a machine.
  const set = await e.fleetctl(adminProfileArgs("e2e", e.hub.url, e.adminSecretFile));
  expect(set.code, set.stderr).toBe(0);
}, 120_000);
afterAll(() => e?.stop(), 60_000);

const taken = new Set<string>();
/** A device no other test uses; `activeOnly`: NetBox active, as UNENROL needs. */
const freshDevice = (activeOnly = false) => {
  const name = names.find((n) => !taken.has(n) && (!activeOnly || active.has(n)));
  if (!name) throw new Error("no device left: raise DEVICES_PER_SITE");
  taken.add(name);
  return name;
};
const device = async (name: string) =>
  (await e.api<DeviceList>(`/api/v1/devices/?nameExact=${name}`)).body.items[0] as Device;

/** An HTTP proxy to `target` that records each request it forwards ("GET /api/v1/..."). */
async function countingProxy(target: string) {
  const to = new URL(target);
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const upstream = httpRequest(
      new URL(req.url ?? "/", to),
      { method: req.method, headers: { ...req.headers, host: to.host } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("the runbook's commands, verbatim", { timeout: 120_000 }, () => {
  it("log in read-only, count the devices, show one device as JSON, list the jobs", async () => {
    const login = await e.fleetctl(["api", "login", "--scope", "read-only"]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("fleet.read");
    expect(login.stdout + login.stderr).not.toContain("e2e-admin-secret");

    const count = await e.fleetctl(["api", "device", "list", "--format", "count"]);
    expect(count).toMatchObject({ code: 0, stdout: `${2 * DEVICES_PER_SITE}\n` });

    const node = names[0]!;
    const one = await e.fleetctl(["api", "device", "list", "--name-exact", node, "--format", "json"]);
    expect(one.code, one.stderr).toBe(0);
    const listed = JSON.parse(one.stdout) as { items: Device[]; count: number };
    expect(listed.count).toBe(1);
    expect(listed.items.map((d) => d.name)).toEqual([node]);
    expect(listed.items[0]).toEqual(await device(node)); // the full representation, as the API serves it

    const jobs = await e.fleetctl(["api", "job", "list"]);
    expect(jobs).toMatchObject({ code: 0, stdout: "", stderr: "Nothing found.\n" }); // no job yet
  });

  it("the token is cached with mode 0600 in a 0700 directory, and whoami reads it", async () => {
    await e.fleetctl(["api", "login", "--scope", "read-only"]);
    expect((await stat(e.configDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(e.configDir, "tokens"))).mode & 0o777).toBe(0o700);
    const files = await readdir(join(e.configDir, "tokens"));
    expect(files).toEqual(["e2e.json"]);
    expect((await stat(join(e.configDir, "tokens", "e2e.json"))).mode & 0o777).toBe(0o600);
    const who = await e.fleetctl(["api", "whoami", "-o", "json"]);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({
      profile: "e2e",
      kind: "machine",
      subject: "fleet-admin",
      scopes: ["fleet.read"],
      expired: false,
    });
  });

  it("a client secret file others can read is used with a warning on stderr naming it and the chmod; a 0600 one says nothing", async () => {
    const quiet = await e.fleetctl(["api", "login", "--scope", "read-only"]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain("warning");
    await chmod(e.adminSecretFile, 0o644);
    try {
      const loud = await e.fleetctl(["api", "login", "--scope", "read-only"]);
      expect(loud.code, loud.stderr).toBe(0);
      expect(loud.stdout).not.toContain("warning");
      expect(loud.stderr).toContain(
        `fleetctl: warning: the client secret file ${e.adminSecretFile} can be read by others (mode 0644): chmod 600 ${e.adminSecretFile}\n`,
      );
      expect(loud.stderr.match(/warning/g)).toHaveLength(1);
    } finally {
      await chmod(e.adminSecretFile, 0o600);
    }
  });

  it("an expired token, or one the hub refuses, is renewed with client credentials and the command goes on", async () => {
    await e.fleetctl(["api", "login", "--scope", "read-only"]);
    const file = join(e.configDir, "tokens", "e2e.json");
    const cached = JSON.parse(await readFile(file, "utf8")) as { accessToken: string; expiresAt: number };
    for (const stale of [
      { ...cached, expiresAt: Date.now() - 1000 }, // expired: renewed before the request
      { ...cached, accessToken: `${cached.accessToken.slice(0, -4)}AAAA` }, // refused (401): renewed, sent again
    ]) {
      await writeFile(file, JSON.stringify(stale), { mode: 0o600 });
      const r = await e.fleetctl(["api", "device", "list", "--format", "count"]);
      expect(r).toMatchObject({ code: 0, stdout: `${2 * DEVICES_PER_SITE}\n` });
      const renewed = JSON.parse(await readFile(file, "utf8")) as { accessToken: string; requestedScopes: string[] };
      expect(renewed.accessToken).not.toBe(stale.accessToken);
      expect(renewed.requestedScopes).toEqual(["fleet.read"]); // the same scopes asked for again
    }
  });

  it("a read-only login is refused a mutation, with the problem, a hint and exit 4", async () => {
    await e.fleetctl(["api", "login", "--scope", "read-only"]);
    const name = freshDevice();
    const r = await e.fleetctl(["api", "device", "cordon", name, "--reason", "read-only test"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: Forbidden \(403 insufficient_scope\): /);
    expect(r.stderr).toContain("fleetctl api login --scope operate");
    expect(r.stderr).toMatch(/request id: \S+/);
    expect((await device(name)).cordoned).toBe(false);
  });
});

describe("conventions", { timeout: 120_000 }, () => {
  it("bad usage exits 2 and names the problem, before anything is sent", async () => {
    // A logged-in profile whose hub is a proxy to the real one that counts what reaches it: a
    // command that sent its request anyway (and let the hub refuse it) would get through.
    const counted = await countingProxy(e.hub.url);
    try {
      const set = await e.fleetctl(adminProfileArgs("counted", counted.url, e.adminSecretFile));
      expect(set.code, set.stderr).toBe(0);
      const login = await e.fleetctl(["--profile", "counted", "api", "login", "--scope", "operate"]);
      expect(login.code, login.stderr).toBe(0);
      expect(counted.requests).not.toEqual([]); // the proxy is on the way to the hub
      const bad = async (args: string[]) => {
        counted.requests.length = 0;
        const r = await e.fleetctl(["--profile", "counted", ...args]);
        expect(counted.requests, `fleetctl ${args.join(" ")}`).toEqual([]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toBe("");
        return r.stderr;
      };
      const job = ["api", "job", "create", "--kind", "burn-in", "--device", names[0]!];

      expect(await bad(["api", "device", "list", "--colour", "blue"])).toContain("unknown option '--colour'");
      expect(await bad(["api", "device", "list", "-o", "xml"])).toContain(
        "Allowed choices are table, wide, json, yaml, name, count",
      );
      expect(await bad(["api", "device", "list", "--operational-status", "HAPPY"])).toContain("--operational-status");
      // Checked against BURN_IN's schema before the device's name is looked up.
      const badParams = await bad([...job, "--param", "durationMinutes=0", "--param", "colour=red"]);
      expect(badParams).toContain("invalid params for BURN_IN");
      expect(badParams).toContain("durationMinutes");
      expect(badParams).toContain("unknown param colour");
      expect(badParams).toContain("BURN_IN takes: durationMinutes?, partition?");

      // The same commands, well formed, do reach the hub through it.
      counted.requests.length = 0;
      const good = await e.fleetctl([
        "--profile",
        "counted",
        "api",
        "device",
        "list",
        "--operational-status",
        "available",
        "-o",
        "count",
      ]);
      expect(good.code, good.stderr).toBe(0);
      expect(counted.requests).toEqual([expect.stringMatching(/^GET \/api\/v1\/devices\/\?/)]);
    } finally {
      await counted.close();
    }
  });

  it("a device that does not exist exits 3", async () => {
    await e.fleetctl(["api", "login", "--scope", "read-only"]);
    const r = await e.fleetctl(["api", "device", "get", "no-such-node"]);
    expect(r).toMatchObject({ code: 3, stdout: "" });
    expect(r.stderr).toContain('no device named "no-such-node"');
  });

  it("cordon and uncordon send If-Match; a stale ETag is a 412 with exit 5 and changes nothing", async () => {
    const login = await e.fleetctl(["api", "login", "--scope", "operate"]);
    expect(login.code, login.stderr).toBe(0);
    const name = freshDevice();
    const before = await device(name);
    const stale = `"${before.id}.${before.version}"`;

    const cordon = await e.fleetctl(["api", "device", "cordon", name, "--reason", "bad DIMM", "-o", "json"]);
    expect(cordon.code, cordon.stderr).toBe(0);
    expect(JSON.parse(cordon.stdout)).toMatchObject({ name, cordoned: true, cordonReason: "bad DIMM" });

    const refused = await e.fleetctl(["api", "device", "uncordon", name, "--yes", "--if-match", stale]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain("412 etag_mismatch");
    expect(refused.stderr).toContain("read it again");
    expect((await device(name)).cordoned).toBe(true);

    const uncordon = await e.fleetctl(["api", "device", "uncordon", name, "--yes"]);
    expect(uncordon.code, uncordon.stderr).toBe(0);
    expect((await device(name)).cordoned).toBe(false);
    const history = await e.fleetctl(["api", "device", "history", name, "--field", "cordoned", "-o", "json"]);
    expect(JSON.parse(history.stdout).count).toBe(2);
  });

  it("tables for people, names for scripts, and no colour on a pipe", async () => {
    await e.fleetctl(["api", "login", "--scope", "read-only"]);
    const table = await e.fleetctl(["api", "device", "list", "--site", "keflavik", "--limit", "3"]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+SITE\s+STATUS\s+CORDONED\s+AGE$/);
    expect(lines).toHaveLength(4);
    expect(table.stdout).not.toContain("\u001b[");
    expect(table.stderr).toBe(`(3 of ${DEVICES_PER_SITE} shown: --limit or --all for more)\n`);

    const all = await e.fleetctl(["api", "device", "list", "--site", "keflavik", "--all", "-o", "name"]);
    const site = (await e.api<DeviceList>("/api/v1/devices/?site=keflavik&limit=100")).body.items;
    expect(site).toHaveLength(DEVICES_PER_SITE);
    expect(all.stdout.trimEnd().split("\n").sort()).toEqual(site.map((d) => `device/${d.name}`).sort());
  });
});

describe("jobs", { timeout: 120_000 }, () => {
  const create = (name: string, ...more: string[]) =>
    e.fleetctl(["api", "job", "create", "--kind", "REPAIR", "--device", name, "--param", "ticket=OPS-1", ...more]);

  it("a job created, waited for and cancelled: the wait ends with the cancelled code", async () => {
    await e.fleetctl(["api", "login", "--scope", "operate"]);
    const created = await create(freshDevice(), "-o", "json");
    expect(created.code, created.stderr).toBe(0);
    const job = JSON.parse(created.stdout) as Job;
    expect(job).toMatchObject({ kind: "REPAIR", status: "PENDING", params: { ticket: "OPS-1" } });

    const listed = await e.fleetctl(["api", "job", "list", "--active", "true"]);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^NAME\\s+KIND\\s+STATUS\\s+PROGRESS\\s+DEVICES\\s+CREATED\n${job.name}\\s+REPAIR\\s+PENDING\\s+0%\\s+1\\s`,
      ),
    );

    // Someone waits for it; the job is cancelled while they wait (nothing picked it up: at once).
    let seen = "";
    const waiting = e.fleetctl(["api", "job", "wait", job.name, "--interval", "200ms"], {
      onStdout: (text) => (seen = text),
    });
    await eventually(async () => expect(seen).toContain(`job ${job.name} PENDING 0%`), 30_000);
    const cancelled = await e.fleetctl(["api", "job", "cancel", job.name, "-o", "json"]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: job.id, status: "CANCELLED" });
    const waited = await waiting;
    expect(waited.code).toBe(11);
    expect(waited.stdout).toContain(`job ${job.name} CANCELLED`);
  });

  it("job list shows the newest job first; --order asc the oldest", async () => {
    await e.fleetctl(["api", "login", "--scope", "operate"]);
    const older = JSON.parse((await create(freshDevice(), "-o", "json")).stdout) as Job;
    const newer = JSON.parse((await create(freshDevice(), "-o", "json")).stdout) as Job;
    const desc = await e.fleetctl(["api", "job", "list", "--all", "-o", "name"]);
    expect(desc.code, desc.stderr).toBe(0);
    const newestFirst = desc.stdout.trimEnd().split("\n");
    expect(newestFirst.slice(0, 2)).toEqual([`job/${newer.name}`, `job/${older.name}`]);
    const asc = await e.fleetctl(["api", "job", "list", "--all", "--order", "asc", "-o", "name"]);
    expect(asc.stdout.trimEnd().split("\n")).toEqual([...newestFirst].reverse());
  });

  it("wait follows the steps a workflow agent reports, on a pipe in plain lines, and exits by outcome", async () => {
    await e.fleetctl(["api", "login", "--scope", "admin"]);
    const sat = await e.fleetctl([
      "api",
      "satellite",
      "create",
      "e2e-sat",
      "--site",
      "keflavik",
      "--env",
      "dev",
      "-o",
      "json",
    ]);
    expect(sat.code, sat.stderr).toBe(0);
    expect(sat.stderr).toContain("shown once");
    const secrets = (JSON.parse(sat.stdout) as { secrets: { agent: string; clientId: string; clientSecret: string }[] })
      .secrets;
    const workflow = secrets.find((s) => s.agent === "workflow")!;
    const agentToken = await clientToken(e.hub.url, workflow.clientId, workflow.clientSecret);
    const agent = hubApi(
      () => e.hub.url,
      () => agentToken,
    );
    const report = async (id: string, body: unknown) =>
      expect((await agent(`/api/v1/jobs/${id}/report/`, { method: "POST", body })).status).toBe(200);

    for (const outcome of ["SUCCEEDED", "FAILED"] as const) {
      const created = await e.fleetctl([
        "api",
        "job",
        "create",
        "--kind",
        "unenrol",
        "--device",
        freshDevice(true),
        "-o",
        "json",
      ]);
      expect(created.code, created.stderr).toBe(0);
      const job = JSON.parse(created.stdout) as Job;
      const step = WORKFLOW_STEPS.UNENROL[0];
      let seen = "";
      const waiting = e.fleetctl(["api", "job", "wait", job.name, "--interval", "200ms"], {
        onStdout: (text) => (seen = text),
      });
      // Each report only once the command has shown the state before it: the lines are live.
      const shown = (line: string) => eventually(async () => expect(seen).toContain(line), 30_000);
      await shown(`job ${job.name} PENDING 0%`);
      await report(job.id, { status: "SUBMITTED", workflowId: `wf-${job.id}` });
      await shown(`job ${job.name} SUBMITTED`);
      await report(job.id, {
        status: "RUNNING",
        progress: 0.5,
        steps: [{ name: step, status: "RUNNING", message: "half way" }],
      });
      await shown(`step ${step} RUNNING: half way`);
      await report(
        job.id,
        outcome === "SUCCEEDED"
          ? { status: "SUCCEEDED", steps: [{ name: step, status: "SUCCEEDED" }] }
          : { status: "FAILED", error: { message: "BMC unreachable", step } },
      );
      const r = await waiting;
      expect(r.code, r.stderr).toBe(outcome === "SUCCEEDED" ? 0 : 10);
      expect(r.stdout).toContain(`job ${job.name} PENDING 0%`);
      expect(r.stdout).toContain(`step ${step} RUNNING: half way`);
      expect(r.stdout).toContain(`job ${job.name} ${outcome}`);
      if (outcome === "FAILED") expect(r.stdout).toContain(`error in ${step}: BMC unreachable`);
      expect(r.stdout + r.stderr).not.toContain("\u001b["); // no bar and no colour on a pipe

      // job get: the job, its steps and its error, as a table and as YAML.
      const got = await e.fleetctl(["api", "job", "get", job.name]);
      expect(got.code, got.stderr).toBe(0);
      expect(got.stdout).toMatch(new RegExp(`^NAME\\s+KIND\\s+STATUS.*\n${job.name}\\s+UNENROL\\s+${outcome}\\s`));
      expect(got.stdout).toMatch(new RegExp(`\nSTEPS\n\\s+${step}\\s+`));
      if (outcome === "FAILED") expect(got.stdout).toContain(`error in ${step}: BMC unreachable\n`);
      const asYaml = await e.fleetctl(["api", "job", "get", job.id, "-o", "yaml"]);
      expect(parseYaml(asYaml.stdout)).toEqual((await e.api<Job>(`/api/v1/jobs/${job.id}/`)).body);
    }
  });

  it("wait gives up after --timeout with its own exit code, and the job goes on", async () => {
    await e.fleetctl(["api", "login", "--scope", "operate"]);
    const job = JSON.parse((await create(freshDevice(), "-o", "json")).stdout) as Job;
    const started = Date.now();
    const r = await e.fleetctl(["api", "job", "wait", job.id, "--timeout", "4s", "--interval", "300ms"]);
    // Not before the timeout (a "4s" read as milliseconds would give up at once)...
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    // ...and by it: it gave up by itself (the test's own limit is far longer), with its exit code.
    expect(r.code).toBe(12);
    expect(r.stderr).toBe(
      `error: timed out waiting for the condition: job ${job.name} still PENDING after 4s (it goes on)\n`,
    );
    expect((await e.api<Job>(`/api/v1/jobs/${job.id}/`)).body.status).toBe("PENDING");
  });
});
