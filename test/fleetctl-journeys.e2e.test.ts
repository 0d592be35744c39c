/**
 * fleetctl as operators use it all day: the real CLI against a real hub process, run in a
 * pseudo-terminal (util-linux `script`, so stdin, stdout and stderr are a terminal) and through
 * pipes (`| head -1`, `| cat`), as a shell runs it. Asserted: exit codes, what the person sees
 * (colour only on a terminal, source text never interpreted by the terminal), the uncordon
 * prompt answered on the terminal, and that no journey ever prints a stack trace.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { Device, DeviceList, Job } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { REPO_ROOT } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import { BIN, adminProfileArgs, startFleetctlEnv, uncordonedDevices, type FleetctlEnv } from "./fleetctl-env.ts";

/** Enough devices that every format's output is larger than a pipe's buffer (64 KiB). */
const PER_SITE = 1500;
const STACK_TRACE = /^\s+at /m;
/** SGR (colour) sequences: the only escapes fleetctl itself writes to a terminal. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const SGR = /\u001b\[[0-9;]*m/g;
/** Anything a terminal would interpret, once fleetctl's own colours are taken out. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/;

let e: FleetctlEnv;
let names: string[];
/** Every stderr (and every terminal's screen) a journey produced: none may hold a stack trace. */
const seen: string[] = [];

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const fleetctlLine = (args: string[]) => [process.execPath, BIN, ...args].map(shellQuote).join(" ");
const env = () => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: e.home,
  XDG_CONFIG_HOME: join(e.home, "config"),
  TERM: "xterm-256color",
});

interface Shell {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A shell line, as a person's shell runs it (`sh -c`), stdin closed. */
function sh(line: string): Promise<Shell> {
  return new Promise((resolve, reject) => {
    const p = spawn("/bin/sh", ["-c", line], { cwd: REPO_ROOT, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("close", (code) => {
      seen.push(stderr);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * fleetctl piped into `reader` (`head -1`, `cat`): fleetctl's own exit code (not the reader's),
 * its stderr, and what the reader printed.
 */
async function piped(args: string[], reader: string): Promise<Shell> {
  const dir = e.home;
  const r = await sh(`{ ${fleetctlLine(args)} 2>"${dir}/pipe.err"; echo $? >"${dir}/pipe.rc"; } | ${reader}`);
  const stderr = await readFile(join(dir, "pipe.err"), "utf8");
  seen.push(stderr);
  return { code: Number((await readFile(join(dir, "pipe.rc"), "utf8")).trim()), stdout: r.stdout, stderr };
}

/**
 * fleetctl in a pseudo-terminal: what the screen shows (stdout and stderr together, with what
 * was typed echoed), and its exit code. `answers`: when the screen shows the prompt, type the line.
 */
function pty(
  args: string[],
  answers: { prompt: RegExp; line: string }[] = [],
): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn("script", ["-qefc", fleetctlLine(args), "/dev/null"], {
      cwd: REPO_ROOT,
      env: env(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    const pending = [...answers];
    const onData = (d: Buffer) => {
      screen += d.toString();
      const next = pending[0];
      if (next && next.prompt.test(screen)) {
        pending.shift();
        p.stdin.write(`${next.line}\r`);
      }
    };
    p.stdout.on("data", onData);
    p.stderr.on("data", onData);
    // A command that hangs (a prompt never answered) ends the journey with what the screen showed.
    const limit = setTimeout(() => p.kill("SIGKILL"), 30_000);
    p.on("error", reject);
    p.on("close", (code) => {
      clearTimeout(limit);
      seen.push(screen);
      resolve({ code, screen });
    });
  });
}

const device = async (name: string) =>
  (await e.api<DeviceList>(`/api/v1/devices/?nameExact=${encodeURIComponent(name)}`)).body.items[0] as Device;
const taken = new Set<string>();
const freshDevice = () => {
  const name = names.find((n) => !taken.has(n))!;
  taken.add(name);
  return name;
};

beforeAll(async () => {
  e = await startFleetctlEnv({}, PER_SITE);
  names = (await uncordonedDevices(e)).map((d) => d.name);
  const set = await sh(
    `${fleetctlLine(adminProfileArgs("ops", e.hub.url, e.adminSecretFile, "--use"))} && ${fleetctlLine(["api", "login"])}`,
  );
  expect(set.code, set.stderr).toBe(0);
}, 180_000);
afterAll(() => e?.stop(), 60_000);

describe("a closed pipe ends the command quietly with 0", { timeout: 120_000 }, () => {
  it.each([
    ["table", []],
    ["wide", ["-o", "wide"]],
    ["json", ["-o", "json"]],
    ["yaml", ["-o", "yaml"]],
    ["name", ["-o", "name"]],
    ["jsonpath", ["-o", 'jsonpath={range .items[*]}{.name}{"\\n"}{end}']],
  ])("device list --all (%s) | head -1", async (_format, args) => {
    const r = await piped(["api", "device", "list", "--all", ...args], "head -1");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).toHaveLength(2); // one line, then the end
  });

  it("job wait | head -1: the change after the first line meets the closed pipe, exit 0", async () => {
    const name = freshDevice();
    const created = await e.api<Job>("/api/v1/jobs/", {
      method: "POST",
      body: { kind: "REPAIR", deviceIds: [(await device(name)).id], params: { ticket: "OPS-7" } },
      headers: { "idempotency-key": crypto.randomUUID() },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const job = created.body;
    const first = join(e.home, "first-line.txt");
    const waiting = piped(["api", "job", "wait", job.name, "--interval", "200ms"], `head -1 >"${first}"`);
    // Once head has its line ("job … PENDING 0%") and is gone, the job ends: the next line meets the closed pipe.
    const line = await eventually(async () => {
      const text = await readFile(first, "utf8").catch(() => "");
      expect(text).not.toBe("");
      return text;
    }, 60_000);
    expect(line).toBe(`job ${job.name} PENDING 0%\n`);
    expect((await e.api(`/api/v1/jobs/${job.id}/cancel`, { method: "POST" })).status).toBeLessThan(300);
    const r = await waiting;
    expect(r).toMatchObject({ code: 0, stderr: "" });
  });
});

describe("cordon and uncordon, as a person on a terminal", { timeout: 120_000 }, () => {
  it("a second cordon is refused naming the reason, who and when; --overwrite replaces it", async () => {
    const name = freshDevice();
    const first = await pty(["api", "device", "cordon", name, "--reason", "clean failed nvme3n1, RMA"]);
    expect(first.code, first.screen).toBe(0);
    const cordonedAt = (await device(name)).cordonedAt!;

    const again = await pty(["api", "device", "cordon", name, "--reason", "again"]);
    expect(again.code, again.screen).toBe(5);
    expect(again.screen).toContain(
      `error: device ${name} is already cordoned: "clean failed nvme3n1, RMA" by fleet-admin at ${cordonedAt}`,
    );
    expect(again.screen).toContain("hint: --overwrite replaces the reason");
    expect((await device(name)).cordonReason).toBe("clean failed nvme3n1, RMA");

    const over = await piped(["api", "device", "cordon", name, "--reason", "RMA shipped", "--overwrite"], "cat");
    expect(over).toMatchObject({ code: 0, stderr: "" });
    expect((await device(name)).cordonReason).toBe("RMA shipped");
  });

  it("uncordon shows the reason it removes and asks; y on the terminal uncordons, n does not", async () => {
    const name = freshDevice();
    expect((await piped(["api", "device", "cordon", name, "--reason", "bad DIMM B2"], "cat")).code).toBe(0);

    const declined = await pty(["api", "device", "uncordon", name], [{ prompt: /\[y\/N\]/, line: "n" }]);
    expect(declined.screen).toContain(`device ${name} is cordoned: "bad DIMM B2" by fleet-admin`);
    expect(declined.screen).toContain(`Uncordon ${name} and remove this reason? [y/N]`);
    expect(declined.code, declined.screen).toBe(1);
    expect(declined.screen).toContain(`error: not uncordoned: ${name} stays cordoned`);
    expect((await device(name)).cordoned).toBe(true);

    const accepted = await pty(["api", "device", "uncordon", name], [{ prompt: /\[y\/N\]/, line: "y" }]);
    expect(accepted.code, accepted.screen).toBe(0);
    expect(accepted.screen).toMatch(new RegExp(`${name}\\s+keflavik\\s+\\S+\\s+no`));
    expect((await device(name)).cordoned).toBe(false);
  });

  it("without a terminal on stdin, uncordon refuses with a usage error naming --yes; --yes uncordons", async () => {
    const name = freshDevice();
    expect((await piped(["api", "device", "cordon", name, "--reason", "fan 3"], "cat")).code).toBe(0);
    const refused = await piped(["api", "device", "uncordon", name], "cat");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("error: uncordon asks for confirmation and stdin is not a terminal");
    expect(refused.stderr).toContain(`hint: pass --yes to uncordon ${name} without asking`);
    expect((await device(name)).cordoned).toBe(true);

    const yes = await piped(["api", "device", "uncordon", name, "--yes", "-o", "json"], "cat");
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stderr).toContain(`device ${name} is cordoned: "fan 3" by fleet-admin`);
    expect(JSON.parse(yes.stdout)).toMatchObject({ name, cordoned: false });
  });
});

describe("what a person sees", { timeout: 120_000 }, () => {
  it("colour on a terminal, none through a pipe", async () => {
    const tty = await pty(["api", "device", "list", "--site", "keflavik", "--limit", "5"]);
    expect(tty.code, tty.screen).toBe(0);
    expect(tty.screen).toMatch(SGR);
    const pipe = await piped(["api", "device", "list", "--site", "keflavik", "--limit", "5"], "cat");
    expect(pipe.code).toBe(0);
    expect(pipe.stdout).not.toContain("\u001b");
    expect(pipe.stdout.split("\n")[0]).toMatch(/^NAME\s+SITE\s+STATUS\s+CORDONED\s+AGE$/);
  });

  it("a NetBox name and a reason holding terminal escapes are shown escaped in every human format", async () => {
    const name = freshDevice();
    // A source writes what NetBox holds: a name that clears the screen, sets the clipboard (OSC 52), hides a link (OSC 8).
    const evil = `${name}\u001b[2J\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]8;;https://evil.example\u001b\\`;
    const reason = "RMA \u001b]8;;https://evil.example\u001b\\ticket\u001b]8;;\u001b\\ \u009b2J";
    const id = (await device(name)).id;
    // The hub refuses such text today (a usage error naming the field, its escapes not echoed) …
    const refused = await piped(["api", "device", "cordon", id, "--reason", reason], "cat");
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("body.cordonReason");
    expect(refused.stderr).toContain("control character");
    expect(refused.stderr).not.toMatch(CONTROL);
    expect((await piped(["api", "device", "cordon", id, "--reason", "RMA ticket"], "cat")).code).toBe(0);
    // … but rows written before it may hold it, as a source once wrote them.
    const db = createDatabase(e.databaseUrl, { poolMax: 1 });
    await db.prisma.device.updateMany({ where: { name }, data: { name: evil, cordonReason: reason } });
    await db.close();

    // The reason as shown: its escapes and its C1 CSI (U+009B) written out; quoted (as JSON writes
    // a string) where the cordon is spelled out.
    const shownReason = "RMA \\e]8;;https://evil.example\\e\\ticket\\e]8;;\\e\\ \\u{9b}2J";
    const quotedReason = '"RMA \\u001b]8;;https://evil.example\\u001b\\\\ticket\\u001b]8;;\\u001b\\\\ \\u{9b}2J"';
    for (const [args, reasonShown] of [
      [["api", "device", "list", "--name", name], undefined],
      [["api", "device", "list", "--name", name, "-o", "wide"], undefined],
      [["api", "device", "list", "--name", name, "-o", "name"], undefined],
      [["api", "device", "list", "--name", name, "-o", "custom-columns=NAME:.name,REASON:.cordonReason"], shownReason],
      [["api", "device", "describe", id], quotedReason],
      [["api", "device", "cordon", id, "--reason", "again"], quotedReason],
    ] as const) {
      const shown = await pty([...args]);
      expect(shown.screen.replace(SGR, ""), args.join(" ")).not.toMatch(CONTROL);
      expect(shown.screen, args.join(" ")).toContain(`${name}\\e[2J\\e]52;c;cm0gLXJmIH4=\\u{07}`);
      if (reasonShown) expect(shown.screen, args.join(" ")).toContain(reasonShown);
    }
    expect((await pty(["api", "device", "describe", id])).screen).toContain(`Cordoned by an operator: ${shownReason}`);
    // JSON and YAML carry the exact data.
    const json = await piped(["api", "device", "get", id, "-o", "json"], "cat");
    expect(JSON.parse(json.stdout)).toMatchObject({ name: evil, cordonReason: reason });
    expect(json.stdout).not.toMatch(CONTROL);
    const yaml = await piped(["api", "device", "get", id, "-o", "yaml"], "cat");
    expect(parseYaml(yaml.stdout)).toMatchObject({ name: evil, cordonReason: reason });
  });

  it("describe: conditions with reasons, each source and its age, the cordon with who, history, the active job", async () => {
    const name = freshDevice();
    expect((await piped(["api", "device", "cordon", name, "--reason", "PSU swap"], "cat")).code).toBe(0);
    const job = await e.api<Job>("/api/v1/jobs/", {
      method: "POST",
      body: { kind: "REPAIR", deviceIds: [(await device(name)).id], params: { ticket: "OPS-9" } },
      headers: { "idempotency-key": crypto.randomUUID() },
    });
    const r = await piped(["api", "device", "describe", name], "cat");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(new RegExp(`^Name:\\s+${name}\n`));
    expect(r.stdout).toMatch(/Status:\s+QUARANTINED/);
    expect(r.stdout).toMatch(/Cordoned:\s+yes: "PSU swap" by fleet-admin at \S+ \(\d+s ago\)/);
    expect(r.stdout).toMatch(/Conditions:\n\s+TYPE\s+STATUS\s+SINCE\s+REASON\s+MESSAGE\n/);
    expect(r.stdout).toMatch(/Cordoned\s+True\s+\S+\s+\S+/);
    expect(r.stdout).toMatch(/NetBox:\s+\S+.*; observed \S+ \(\S+ ago\)/);
    expect(r.stdout).toMatch(/last error: /);
    expect(r.stdout).toContain(`Active job:\n  ${job.body.name}  REPAIR  PENDING  0%`);
    expect(r.stdout).toMatch(
      /Recent history \(last 10\):\n(\s+\S+ ago\s+.*\n)*\s+\S+ ago\s+cordoned: \{"cordoned":false\} -> \{"reason":"PSU swap".*\(operator, fleet-admin\)/,
    );
    const json = JSON.parse((await piped(["api", "device", "describe", name, "-o", "json"], "cat")).stdout);
    expect(json).toMatchObject({ device: { name, cordonReason: "PSU swap" }, activeJobs: [{ id: job.body.id }] });
    await e.api(`/api/v1/jobs/${job.body.id}/cancel`, { method: "POST" });
  });

  it("--no-headers, jsonpath and custom-columns read as kubectl's do", async () => {
    const bare = await piped(["api", "device", "list", "--site", "keflavik", "--limit", "3", "--no-headers"], "cat");
    expect(bare.stdout.split("\n").filter(Boolean)).toHaveLength(3);
    expect(bare.stdout).not.toMatch(/^NAME/);
    const names3 = (
      await piped(
        ["api", "device", "list", "--site", "keflavik", "--limit", "3", "-o", "jsonpath={.items[*].name}"],
        "cat",
      )
    ).stdout;
    expect(names3.split(" ")).toHaveLength(3);
    const cols = await piped(
      [
        "api",
        "device",
        "list",
        "--site",
        "keflavik",
        "--limit",
        "2",
        "-o",
        "custom-columns=NAME:.name,SITE:.site.slug",
      ],
      "cat",
    );
    expect(cols.stdout).toMatch(/^NAME\s+SITE\n\S+\s+keflavik\n\S+\s+keflavik\n$/);
    const bad = await piped(["api", "device", "list", "-o", "jsonpath={.items["], "cat");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: jsonpath: /);
  });

  it("-f value -c COLUMN read as the openstack client's do; -c with -o json is a usage error", async () => {
    const values = await piped(
      ["api", "device", "list", "--site", "keflavik", "--limit", "2", "-f", "value", "-c", "site", "-c", "name"],
      "cat",
    );
    expect(values.code).toBe(0);
    expect(values.stdout).toMatch(/^keflavik \S+\nkeflavik \S+\n$/);
    const first = await piped(["api", "device", "list", "-f", "value", "-c", "name"], "head -1");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^\S+\n$/);
    const json = await piped(["api", "device", "list", "-o", "json", "-c", "name"], "cat");
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/^error: -c chooses columns of -o table, wide, value; -o json shows every field/);
    const unknown = await piped(["api", "device", "list", "-f", "value", "-c", "rack"], "cat");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error: no column "rack": device columns are NAME, /i);
  });

  it("--page n shows the nth page of --limit devices, as the UI's page jump does; with --all it is a usage error", async () => {
    const names = async (...args: string[]) => {
      const r = await piped(
        ["api", "device", "list", "--site", "keflavik", ...args, "-f", "value", "-c", "name"],
        "cat",
      );
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.split("\n").filter(Boolean);
    };
    const four = await names("--limit", "4");
    expect(four).toHaveLength(4);
    expect(await names("--limit", "2", "--page", "2")).toEqual(four.slice(2));
    const both = await piped(["api", "device", "list", "--page", "2", "--all"], "cat");
    expect(both.code).toBe(2);
    expect(both.stderr).toBe("error: --page shows one page: it cannot be used with --all\n");
  });

  it("enum values in any case and several comma-separated; a bad one is a usage error naming it", async () => {
    const count = async (flag: string, value: string) => {
      const r = await piped(["api", "device", "list", flag, value, "-o", "count"], "cat");
      expect(r.code, `${flag} ${value}: ${r.stderr}`).toBe(0);
      return Number(r.stdout);
    };
    const mixed = (v: string) => v.charAt(0).toUpperCase() + v.slice(1).toLowerCase();
    // Every enum filter of the list: a value some device has, and another.
    for (const [flag, some, other] of [
      ["--operational-status", "AVAILABLE", "IMPAIRED"],
      ["--device-class", "GPU_COMPUTE", "CPU_HYPERVISOR"],
      ["--status", "active", "staged"],
      ["--burn-in", "none", "failed"],
    ] as const) {
      // In any case: upper, lower and mixed, the same devices.
      const n = await count(flag, some);
      expect(n, flag).toBeGreaterThan(0);
      for (const spelt of [some.toUpperCase(), some.toLowerCase(), mixed(some)].filter((v) => v !== some))
        expect(await count(flag, spelt), `${flag} ${spelt}`).toBe(n);
      // Several values, comma-separated and in any case: a device of either.
      expect(await count(flag, `${mixed(some)},${other.toLowerCase()}`), flag).toBe(n + (await count(flag, other)));
      // A bad one, alone or among good ones, is named, with the values allowed.
      for (const bad of ["brokn", `${some},brokn`]) {
        const refused = await piped(["api", "device", "list", flag, bad], "cat");
        expect(refused.code, `${flag} ${bad}`).toBe(2);
        expect(refused.stderr, `${flag} ${bad}`).toMatch(new RegExp(`^error: ${flag}: 'brokn': not one of `));
      }
    }
    // Two statuses that some devices have, together: the devices of either.
    const impaired = await count("--operational-status", "IMPAIRED");
    const failed = await count("--operational-status", "FAILED");
    expect(impaired + failed).toBeGreaterThan(0);
    expect(await count("--operational-status", "impaired,Failed")).toBe(impaired + failed);
  });

  it("whoami shows the scopes the hub grants", async () => {
    const r = await piped(["api", "whoami", "-o", "json"], "cat");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      kind: "machine",
      principal: "fleet-admin",
      scopes: ["fleet.admin", "fleet.operate", "fleet.read"],
    });
  });
});

describe("job wait", { timeout: 120_000 }, () => {
  it("--timeout says it timed out, exit 12, and -o json prints the job as it stood; --active lists it; -o json|yaml|name print the ended job", async () => {
    const name = freshDevice();
    const job = (
      await e.api<Job>("/api/v1/jobs/", {
        method: "POST",
        body: { kind: "REPAIR", deviceIds: [(await device(name)).id], params: { ticket: "OPS-8" } },
        headers: { "idempotency-key": crypto.randomUUID() },
      })
    ).body;
    const r = await piped(
      ["api", "job", "wait", job.name, "--timeout", "1s", "--interval", "200ms", "-o", "json"],
      "cat",
    );
    expect(r.code).toBe(12);
    expect(r.stderr).toBe(
      `error: timed out waiting for the condition: job ${job.name} still PENDING after 1s (it goes on)\n`,
    );
    expect(JSON.parse(r.stdout)).toMatchObject({ id: job.id, status: "PENDING" });

    const tty = await pty(["api", "job", "wait", job.name, "--timeout", "1s", "--interval", "200ms"]);
    expect(tty.code).toBe(12);
    expect(tty.screen).toContain("timed out waiting for the condition");

    const active = await piped(["api", "job", "list", "--active", "-o", "name"], "cat");
    expect(active.code, active.stderr).toBe(0);
    expect(active.stdout).toContain(`job/${job.name}\n`);
    await e.api(`/api/v1/jobs/${job.id}/cancel`, { method: "POST" });
    const ended = await piped(["api", "job", "list", "--active=false", "-o", "name"], "cat");
    expect(ended.stdout).toContain(`job/${job.name}\n`);

    // The job as it ended, in each format scripts read, with the exit code of its end.
    const asJson = await piped(["api", "job", "wait", job.name, "-o", "json"], "cat");
    expect(asJson.code).toBe(11);
    expect(JSON.parse(asJson.stdout)).toEqual((await e.api<Job>(`/api/v1/jobs/${job.id}/`)).body);
    const asYaml = await piped(["api", "job", "wait", job.name, "-o", "yaml"], "cat");
    expect(asYaml.code).toBe(11);
    expect(parseYaml(asYaml.stdout)).toMatchObject({ id: job.id, status: "CANCELLED" });
    expect(await piped(["api", "job", "wait", job.name, "-o", "name"], "cat")).toMatchObject({
      code: 11,
      stdout: `job/${job.name}\n`,
      stderr: "",
    });
  });
});

describe("shell completion", { timeout: 120_000 }, () => {
  /** What bash completes for the words typed (the last one partial), through the generated script. */
  const complete = (words: string[], extraEnv = "") =>
    sh(
      `${extraEnv} bash -c ${shellQuote(
        `fleetctl() { ${fleetctlLine([])} "$@"; }
         source <(fleetctl completion bash)
         COMP_WORDS=(${words.map(shellQuote).join(" ")}); COMP_CWORD=${words.length - 1}
         _fleetctl; printf '%s\n' "\${COMPREPLY[@]}"`,
      )}`,
    );

  it("offers enum values and the hub's device names; silent when the hub does not answer", async () => {
    const enums = await complete(["fleetctl", "api", "device", "list", "--operational-status", "IMP"]);
    expect(enums).toMatchObject({ code: 0, stdout: "IMPAIRED\n", stderr: "" });
    const formats = await complete(["fleetctl", "api", "device", "list", "-o", "j"]);
    expect(formats.stdout).toBe("json\njsonpath=\n");

    const prefix = names[0]!.slice(0, -1);
    // The CLI runs from source here (tsx), slower to start than the 2 s a person's shell gives it
    // on a loaded machine: the test gives it more, through the variable the script reads.
    const live = await complete(["fleetctl", "api", "device", "describe", prefix], "FLEETCTL_COMPLETION_TIMEOUT_S=30");
    expect(live.code, live.stderr).toBe(0);
    const offered = live.stdout.split("\n").filter(Boolean);
    expect(offered).toContain(names[0]);
    expect(offered.every((n) => n.startsWith(prefix))).toBe(true);

    const down = await complete(["fleetctl", "api", "device", "get", prefix], "FLEETCTL_HUB=http://127.0.0.1:9");
    expect(down).toMatchObject({ code: 0, stdout: "\n", stderr: "" });
  });
});

describe("no journey", () => {
  it("ever printed a stack trace", () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const text of seen) expect(text).not.toMatch(STACK_TRACE);
  });
});
