/**
 * `fleetctl fleet plan|preflight`, run as the binary: the seed's example spec planned and
 * preflighted against sample evidence, exit codes, and the fail-closed refusals. The real
 * `nebius` CLI cannot run here; a stand-in on PATH prints the recorded provider JSON (the
 * package's test-fixtures, shaped as the CLI prints them) so the CLI evidence path runs for real.
 */
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { FleetPlanSchema, FleetPreflightSchema } from "@fm/fleet-spec";
import { REPO_ROOT } from "@fm/test-support/process";
import { run } from "./fleetctl-env.ts";

const FIXTURES = join(REPO_ROOT, "packages/fleet-spec/test-fixtures");
const EXAMPLE = join(FIXTURES, "fleet1-test.yaml");
const MIXED = join(FIXTURES, "fleet-mixed.yaml");
const EVIDENCE = join(FIXTURES, "evidence/fleet1-test");
const TENANT = "tenant-e00fleet1test00";

let home: string;
let bin: string;
const PATH_WITHOUT_NEBIUS = `${dirname(process.execPath)}:/usr/bin:/bin`;
const fleetctl = (args: string[], env: Record<string, string> = {}) =>
  run(["fleet", ...args], { HOME: home, PATH: PATH_WITHOUT_NEBIUS, ...env });

/** The stand-in `nebius`: logs its argv, answers from a directory of recorded JSON by the same file names. */
const FAKE_NEBIUS = `#!/usr/bin/env node
const fs = require("node:fs");
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_NEBIUS_LOG, JSON.stringify(args) + "\\n");
if (process.env.FAKE_NEBIUS_FAIL) { process.stderr.write(process.env.FAKE_NEBIUS_FAIL + "\\n"); process.exit(1); }
const rest = args[0] === "--profile" ? args.slice(2) : args;
const arg = (name) => rest[rest.indexOf(name) + 1];
const key = rest.slice(0, 3).join(" ");
const file = {
  "quotas quota-allowance list": "quota-allowances.json",
  "iam project list": "projects.json",
  "iam project get": "project-" + arg("--id") + ".json",
  "capacity capacity-block-group list": "capacity-block-groups.json",
  "capacity capacity-interval list": "capacity-intervals-" + arg("--parent-id") + ".json",
  "capacity capacity-block-group list-resources": "capacity-block-group-resources-" + arg("--id") + ".json",
}[key];
if (!file || !fs.existsSync(process.env.FAKE_NEBIUS_DIR + "/" + file)) { process.stderr.write("NotFound: " + key + "\\n"); process.exit(1); }
process.stdout.write(fs.readFileSync(process.env.FAKE_NEBIUS_DIR + "/" + file, "utf8"));
`;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "fleetctl-fleet-"));
  await mkdir(join(home, ".nebius"));
  await writeFile(
    join(home, ".nebius", "config.yaml"),
    `default: main
profiles:
  main:
    endpoint: api.nebius.cloud
    tenant-id: ${TENANT}
  second:
    endpoint: api.nebius.cloud
    tenant-id: tenant-e00mixedfleet
  no-tenant:
    endpoint: api.nebius.cloud
`,
  );
  bin = join(home, "bin");
  await mkdir(bin);
  await writeFile(join(bin, "nebius"), FAKE_NEBIUS);
  await chmod(join(bin, "nebius"), 0o755);
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe("fleet plan", { timeout: 120_000 }, () => {
  it("plans the seed's example: two projects created on demand, the tenant from the active profile", async () => {
    const r = await fleetctl(["plan", "--spec", EXAMPLE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(
      `fleet fleet1-test: tenant ${TENANT} (from the profile), region us-central1, as profile main`,
    );
    expect(lines[2]).toMatch(/^PROJECT +TARGET +CLUSTER +BACKEND +CPU NODES +GPU NODES +RESERVED +GPU CLUSTER +DRIVER/);
    expect(lines[3]).toMatch(
      /^a +create fleet1-test-a +default +mk8s +1 x cpu-d3 48vcpu-192gb +1 x gpu-rtx6000 1gpu-24vcpu-218gb +- +no +managed cuda13\.0 +1024 GiB/,
    );
    expect(lines[4]).toMatch(/^b +create fleet1-test-b +default +mk8s/);
    expect(lines[5]).toBe("bucket of a: enhanced, 1024 GiB cap");
  });

  it("-o json is the documented, versioned shape", async () => {
    const r = await fleetctl(["plan", "--spec", EXAMPLE, "-o", "json"]);
    expect(r.code).toBe(0);
    const plan = FleetPlanSchema.parse(JSON.parse(r.stdout));
    expect(plan).toMatchObject({
      kind: "FleetPlan",
      version: 1,
      tenantId: TENANT,
      profile: "main",
      tenantFrom: "profile",
    });
    expect(plan.projects.map((p) => p.projectName)).toEqual(["fleet1-test-a", "fleet1-test-b"]);
    const yaml = await fleetctl(["plan", "--spec", EXAMPLE, "-o", "yaml"]);
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(plan);
  });

  it("selectors and the prefix narrow and rename; --nebius-profile picks the tenant", async () => {
    const r = await fleetctl([
      "plan",
      "--spec",
      MIXED,
      "--only-projects",
      "c",
      "--only-clusters",
      "train,infer",
      "--project-prefix",
      "lab-",
      "--nebius-profile",
      "second",
      "-o",
      "json",
    ]);
    expect(r.stderr).toBe("");
    const plan = FleetPlanSchema.parse(JSON.parse(r.stdout));
    expect(plan.projects.map((p) => [p.projectName, p.clusters.map((c) => c.name)])).toEqual([
      ["lab-c", ["train", "infer"]],
    ]);
    expect(plan.selection).toEqual({ projects: ["c"], clusters: ["train", "infer"] });
    expect(plan.projects[0]?.clusters[0]).toMatchObject({ enableGpuCluster: true, infinibandFabric: "us-central1-a" });
  });

  it("--profile (fleetctl's hub profile) is refused with exit 2, naming --nebius-profile, for plan and preflight", async () => {
    for (const args of [
      ["plan", "--spec", EXAMPLE, "--profile", "second"],
      ["preflight", "--spec", EXAMPLE, "--evidence", EVIDENCE, "-p", "second"],
    ]) {
      const r = await fleetctl(args);
      expect(r, args.join(" ")).toMatchObject({ code: 2, stdout: "" });
      expect(r.stderr).toBe(
        'error: --profile "second" names a fleetctl hub profile, which the fleet commands do not use\n' +
          "hint: for the Nebius profile to plan as, pass --nebius-profile second (or set profile: in the spec)\n",
      );
    }
  });

  it("an unknown selector fails closed with exit 2", async () => {
    const r = await fleetctl(["plan", "--spec", EXAMPLE, "--only-projects", "a,zz"]);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toBe("error: the selectors do not fit the spec:\n  --only-projects: no project zz in the spec\n");
  });

  it("an invalid spec is exit 2, every problem named by its path", async () => {
    const spec = join(home, "bad.yaml");
    await writeFile(
      spec,
      (await readFile(EXAMPLE, "utf8"))
        .replace("count: 1\n    platform: gpu-rtx6000", "count: -1\n    platform: gpu-rtx6000")
        .replace("  - name: b", "  - name: b\n    project_id: project-e00abcdef"),
    );
    const r = await fleetctl(["plan", "--spec", spec]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: the spec ${spec} is not valid (2):\n` +
        "  defaults.gpu_nodes.count: Too small: expected number to be >=0\n" +
        "  projects[1]: a project has exactly one of name (created on demand) or project_id\n",
    );
  });

  it("a rule broken after the merge is exit 2 at the cluster's path", async () => {
    const spec = join(home, "rule.yaml");
    await writeFile(
      spec,
      (await readFile(EXAMPLE, "utf8")).replace(
        "  - name: b\n",
        "  - name: b\n    clusters:\n      - enable_gpu_cluster: true\n",
      ),
    );
    const r = await fleetctl(["plan", "--spec", spec]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "  projects[1].clusters[0].enable_gpu_cluster: GPU clustering needs a fabric-capable 8-GPU SXM preset (gpu-rtx6000 with 1 GPUs per node is not)\n",
    );
  });

  it("a profile without a tenant-id is a hard error, not a guess", async () => {
    const r = await fleetctl(["plan", "--spec", EXAMPLE, "--nebius-profile", "no-tenant"]);
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toBe("error: the Nebius profile no-tenant has no tenant-id: refusing to guess the tenant\n");
  });

  it("a YAML alias bomb is exit 2 naming the file, not a crash", async () => {
    const spec = join(home, "bomb.yaml");
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(", ")}]`,
      );
    await writeFile(spec, levels.join("\n"));
    const r = await fleetctl(["plan", "--spec", spec]);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toBe(
      `error: the spec ${spec} is not valid (1):\n` +
        "  (spec): not valid YAML: Excessive alias count indicates a resource exhaustion attack\n",
    );
  });

  it("a spec that cannot be read is exit 2", async () => {
    const r = await fleetctl(["plan", "--spec", join(home, "nope.yaml")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: cannot read the spec ${join(home, "nope.yaml")} (ENOENT)\n`);
  });
});

describe("fleet preflight", { timeout: 120_000 }, () => {
  it("passes the seed's example against the sample evidence (exit 0)", async () => {
    const r = await fleetctl(["preflight", "--spec", EXAMPLE, "--evidence", EVIDENCE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe(`preflight fleet1-test: PASS (tenant ${TENANT}, region us-central1)`);
    expect(r.stdout).toMatch(/\nb +existing +project-e00fleet1testb01 +ok\n/);
    expect(r.stdout).toMatch(/\nvpc\.allocation\.count +8 +104 +128 +ok\n/);
    expect(r.stdout).toMatch(/\ncompute\.disk\.size\.network-ssd +512 GiB +14848 GiB +16384 GiB +ok\n/);
  });

  it("-o json is the documented, versioned shape", async () => {
    const r = await fleetctl(["preflight", "--spec", EXAMPLE, "--evidence", EVIDENCE, "-o", "json"]);
    expect(r.code).toBe(0);
    const report = FleetPreflightSchema.parse(JSON.parse(r.stdout));
    expect(report).toMatchObject({ kind: "FleetPreflight", version: 1, verdict: "pass", shortfalls: [] });
  });

  it("refuses with exit 14 and lists every shortfall", async () => {
    const dir = join(home, "short");
    await cp(EVIDENCE, dir, { recursive: true });
    const file = join(dir, "quota-allowances.json");
    const quotas = JSON.parse(await readFile(file, "utf8")) as {
      items: { metadata: { name: string }; spec: { limit?: string; region: string } }[];
    };
    for (const q of quotas.items)
      if (
        q.spec.region === "us-central1" &&
        ["compute.instance.gpu.rtx6000", "vpc.allocation.count"].includes(q.metadata.name)
      )
        q.spec.limit = "2";
    await writeFile(file, JSON.stringify(quotas));
    const r = await fleetctl(["preflight", "--spec", EXAMPLE, "--evidence", dir, "-o", "json"]);
    expect(r.code).toBe(14);
    expect(r.stderr).toBe("error: preflight refused: 2 shortfall(s); nothing may be created as it stands\n");
    expect(FleetPreflightSchema.parse(JSON.parse(r.stdout)).shortfalls).toEqual([
      {
        kind: "quota",
        subject: "compute.instance.gpu.rtx6000",
        message: "compute.instance.gpu.rtx6000 [us-central1]: needs 2, 0 available (limit 2, used 2)",
      },
      {
        kind: "quota",
        subject: "vpc.allocation.count",
        message: "vpc.allocation.count [us-central1]: needs 8, 0 available (limit 2, used 24)",
      },
    ]);
  });

  it("an empty --evidence is a usage error (exit 2), not a silent run of the nebius CLI", async () => {
    const log = join(home, "nebius-empty.log");
    const r = await fleetctl(["preflight", "--spec", EXAMPLE, "--evidence", ""], {
      PATH: `${bin}:${PATH_WITHOUT_NEBIUS}`,
      FAKE_NEBIUS_LOG: log,
    });
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toBe("error: --evidence needs a directory; leave the option out to read from the nebius CLI\n");
    await expect(readFile(log, "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("missing and malformed evidence refuse (exit 14), naming the file", async () => {
    const dir = join(home, "broken");
    await mkdir(dir);
    await writeFile(join(dir, "quota-allowances.json"), '{"items": [');
    const r = await fleetctl(["preflight", "--spec", EXAMPLE, "--evidence", dir]);
    expect(r.code).toBe(14);
    expect(r.stdout).toContain(
      "shortfalls (2):\n" +
        `  evidence projects: project list: projects.json is missing from ${dir}\n` +
        "  evidence quota-allowances: quota allowance list: quota-allowances.json is not JSON",
    );
    expect(r.stdout).toMatch(/\ncompute\.instance\.count +4 +- +- +unknown\n/);
  });

  it("without --evidence runs the nebius CLI with the fleet's profile, read-only", async () => {
    const log = join(home, "nebius.log");
    const r = await fleetctl(["preflight", "--spec", MIXED, "--nebius-profile", "second", "-o", "json"], {
      PATH: `${bin}:${PATH_WITHOUT_NEBIUS}`,
      FAKE_NEBIUS_DIR: join(FIXTURES, "evidence/fleet-mixed"),
      FAKE_NEBIUS_LOG: log,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(FleetPreflightSchema.parse(JSON.parse(r.stdout))).toMatchObject({
      verdict: "pass",
      tenantId: "tenant-e00mixedfleet",
      capacityBlocks: [{ id: "capacityblockgroup-e00train0001", ok: true, remainingGpus: 24, instances: 5 }],
    });
    const calls = (await readFile(log, "utf8"))
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as string[]).join(" "))
      .sort();
    const p = "--profile second";
    expect(calls).toEqual([
      `${p} capacity capacity-block-group list --parent-id tenant-e00mixedfleet --all --format json`,
      `${p} capacity capacity-block-group list-resources --id capacityblockgroup-e00train0001 --format json`,
      `${p} capacity capacity-interval list --parent-id capacityblockgroup-e00train0001 --all --format json`,
      `${p} iam project get --id project-e00existing123 --format json`,
      `${p} iam project list --parent-id tenant-e00mixedfleet --all --format json`,
      `${p} quotas quota-allowance list --parent-id tenant-e00mixedfleet --all --format json`,
    ]);
  });

  it("a failing nebius CLI, or none installed, refuses (exit 14) with its reason", async () => {
    const failing = await fleetctl(["preflight", "--spec", EXAMPLE], {
      PATH: `${bin}:${PATH_WITHOUT_NEBIUS}`,
      FAKE_NEBIUS_LOG: join(home, "failing.log"),
      FAKE_NEBIUS_FAIL: "Unauthenticated: token expired",
    });
    expect(failing.code).toBe(14);
    expect(failing.stdout).toContain(
      "  evidence quota-allowances: quota allowance list: nebius quotas quota-allowance list failed: exit 1: Unauthenticated: token expired\n",
    );
    const missing = await fleetctl(["preflight", "--spec", EXAMPLE]);
    expect(missing.code).toBe(14);
    expect(missing.stdout).toContain("nebius iam project list failed: the nebius CLI (nebius) is not installed");
  });
});
