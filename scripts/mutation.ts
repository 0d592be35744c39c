/**
 * `npm run mutation`: the suite's strength as a number anyone can re-measure. Each mutant is one
 * small, realistic break of a pure rule (the domain's, the agents' planners'), the kind a tired
 * reviewer would let through; the tests that own the rule must fail on it. The script checks
 * those tests pass on the unbroken code first, then applies each break in place, runs the
 * owning tests, and restores the file (also on Ctrl-C or a crash), and prints what was killed.
 *
 * It changes files in the working tree while it runs, so it refuses to start when a file it
 * would break has uncommitted changes; it is not part of `npm test` (a few minutes). Exit status
 * 1 if any mutant survived. `npm run mutation -- impairment` runs the mutants whose id contains
 * "impairment". docs/testing.md explains how to add one.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@fm/test-support/process";

export interface Mutant {
  id: string;
  /** Repository-relative path of the file to break. */
  file: string;
  /** Text that occurs exactly once in the file, and what it becomes. */
  from: string;
  to: string;
  /** The unit test files that own the behaviour. */
  tests: string[];
}

const DOMAIN = "packages/domain/src";
const AGENTS = "apps/satellite-agents/src";

export const MUTANTS: Mutant[] = [
  {
    id: "impairment: cordon one tick early (>= becomes >, inverted)",
    file: `${DOMAIN}/impairment.ts`,
    from: "now.getTime() - d.healthSince.getTime() >= ms",
    to: "now.getTime() - d.healthSince.getTime() > ms - 1000",
    tests: [`${DOMAIN}/impairment.test.ts`],
  },
  {
    id: "impairment: release an operator's cordon too",
    file: `${DOMAIN}/impairment.ts`,
    from: 'd.cordoned && d.cordonSource === "impairment" && lasted(d, "ok"',
    to: 'd.cordoned && lasted(d, "ok"',
    tests: [`${DOMAIN}/impairment.test.ts`],
  },
  {
    id: "impairment: site limit rounds up",
    file: `${DOMAIN}/impairment.ts`,
    from: "Math.floor(devices.length * policy.maxSiteFraction)",
    to: "Math.ceil(devices.length * policy.maxSiteFraction)",
    tests: [`${DOMAIN}/impairment.test.ts`],
  },
  {
    id: "impairment: releases not counted off the held cordons",
    file: `${DOMAIN}/impairment.ts`,
    from: ".length - release.length;",
    to: ".length;",
    tests: [`${DOMAIN}/impairment.test.ts`],
  },
  {
    id: "staleness: a source exactly at the window is stale",
    file: `${DOMAIN}/device-observations.ts`,
    from: "a.ageMs > staleAfterMs",
    to: "a.ageMs >= staleAfterMs - 1000",
    tests: [`${DOMAIN}/device-status.test.ts`],
  },
  {
    id: "device status: a cordon no longer outranks staleness",
    file: `${DOMAIN}/device-status.ts`,
    from: '  if (obs.operator.cordoned) return "QUARANTINED";\n  if (isStale(obs, now, staleAfterMs)) return "STALE";',
    to: '  if (isStale(obs, now, staleAfterMs)) return "STALE";\n  if (obs.operator.cordoned) return "QUARANTINED";',
    tests: [`${DOMAIN}/device-status.test.ts`],
  },
  {
    id: "device status: health critical no longer FAILED",
    file: `${DOMAIN}/device-status.ts`,
    from: '    obs.health?.status === "critical"\n',
    to: '    obs.health?.status === "failed"\n',
    tests: [`${DOMAIN}/device-status.test.ts`],
  },
  {
    id: "site silence: the window read as milliseconds of seconds",
    file: `${DOMAIN}/sites.ts`,
    from: "silent: silenceMs > silenceAfterMs,",
    to: "silent: silenceMs > silenceAfterMs * 1000,",
    tests: ["apps/hub/src/modules/sites/sites.int.test.ts", "apps/hub/src/modules/sites/site-silence.int.test.ts"],
  },
  {
    id: "site silence: seconds rounded up",
    file: `${DOMAIN}/sites.ts`,
    from: "silenceSeconds: Math.floor(silenceMs / 1000),",
    to: "silenceSeconds: Math.ceil(silenceMs / 1000),",
    tests: ["apps/hub/src/modules/sites/sites.int.test.ts", "apps/hub/src/modules/sites/site-silence.int.test.ts"],
  },
  {
    id: "jobs: a finished job may run again",
    file: `${DOMAIN}/jobs.ts`,
    from: "  SUCCEEDED: [],",
    to: '  SUCCEEDED: ["RUNNING"],',
    tests: [`${DOMAIN}/jobs.test.ts`],
  },
  {
    id: "jobs: a cordoned device can be released",
    file: `${DOMAIN}/jobs.ts`,
    from: 'd.cordoned && kind === "RELEASE"',
    to: 'd.cordoned && kind === "BURN_IN"',
    tests: [`${DOMAIN}/jobs.test.ts`],
  },
  {
    id: "jobs: a device missing from NetBox takes jobs",
    file: `${DOMAIN}/jobs.ts`,
    from: "  if (d.netbox.missing) return `${d.name} is no longer in NetBox`;\n",
    to: "",
    tests: [`${DOMAIN}/jobs.test.ts`],
  },
  {
    id: "discrepancies: the hub's own drain reported as external",
    file: `${DOMAIN}/discrepancies.ts`,
    from: "drained && !ours && !d.cordoned",
    to: "drained && !d.cordoned",
    tests: [`${DOMAIN}/discrepancies.test.ts`],
  },
  {
    id: "discrepancies: a cordoned critical device reported",
    file: `${DOMAIN}/discrepancies.ts`,
    from: 'd.healthStatus === "critical" && !d.cordoned',
    to: 'd.healthStatus === "critical"',
    tests: [`${DOMAIN}/discrepancies.test.ts`],
  },
  {
    id: "MAC: lower case kept",
    file: `${DOMAIN}/mac.ts`,
    from: "hex.toUpperCase().match",
    to: "hex.match",
    tests: [`${DOMAIN}/mac.test.ts`],
  },
  {
    id: "SLURM cordon: drains over SLURM's own DOWN",
    file: `${AGENTS}/slurm-agent/cordon.ts`,
    from: "(!isDrained(node) && !slurmOut)",
    to: "!isDrained(node)",
    tests: [`${AGENTS}/slurm-agent/cordon.test.ts`],
  },
  {
    id: "SLURM cordon: undrains someone else's drain",
    file: `${AGENTS}/slurm-agent/cordon.ts`,
    from: '    } else if (ours) {\n      actions.push({ node: node.name, action: "undrain" });',
    to: '    } else if (isDrained(node)) {\n      actions.push({ node: node.name, action: "undrain" });',
    tests: [`${AGENTS}/slurm-agent/cordon.test.ts`],
  },
  {
    id: "SLURM cordon: control characters kept in the drain reason",
    file: `${AGENTS}/slurm-agent/cordon.ts`,
    from: '.replace(/\\p{Cc}+/gu, " ")',
    to: "",
    tests: [`${AGENTS}/slurm-agent/cordon.test.ts`],
  },
  {
    id: "Ironic cordon: clears someone else's maintenance",
    file: `${AGENTS}/openstack-agent/cordon.ts`,
    from: '    } else if (ours) {\n      actions.push({ uuid: node.uuid, name: node.name, action: "clear" });',
    to: '    } else if (node.maintenance) {\n      actions.push({ uuid: node.uuid, name: node.name, action: "clear" });',
    tests: [`${AGENTS}/openstack-agent/cordon.test.ts`],
  },
  {
    id: "Ironic cordon: an outdated reason is never refreshed",
    file: `${AGENTS}/openstack-agent/cordon.ts`,
    from: "if (!node.maintenance || (ours && node.maintenanceReason !== reason))",
    to: "if (!node.maintenance)",
    tests: [`${AGENTS}/openstack-agent/cordon.test.ts`],
  },
];

/** Runs the test files with vitest (unit tests in the unit project, integration ones in theirs). */
function runTests(tests: string[]): boolean {
  const projects = new Set(tests.map((t) => (t.endsWith(".int.test.ts") ? "integration" : "unit")));
  for (const project of projects) {
    const files = tests.filter((t) => (project === "integration") === t.endsWith(".int.test.ts"));
    const r = spawnSync(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", "--project", project, "--bail", "1", ...files],
      { cwd: REPO_ROOT, stdio: "ignore", env: { ...process.env, FORCE_COLOR: "0" } },
    );
    if (r.status !== 0) return false;
  }
  return true;
}

function dirty(file: string): boolean {
  return execFileSync("git", ["status", "--porcelain", "--", file], { cwd: REPO_ROOT, encoding: "utf8" }).trim() !== "";
}

function main(): void {
  const only = process.argv[2];
  const mutants = MUTANTS.filter((m) => !only || m.id.includes(only));
  if (!mutants.length) throw new Error(`no mutant's id contains "${only}"`);
  const files = [...new Set(mutants.map((m) => m.file))];
  const changed = files.filter(dirty);
  if (changed.length) {
    console.error(`mutation: refusing to break files with uncommitted changes: ${changed.join(", ")}`);
    process.exit(2);
  }
  // Every break must apply exactly once, or the mutant tests nothing.
  for (const m of mutants) {
    const count = readFileSync(join(REPO_ROOT, m.file), "utf8").split(m.from).length - 1;
    if (count !== 1) throw new Error(`mutant "${m.id}": its text occurs ${count} times in ${m.file}, not once`);
  }
  const owning = [...new Set(mutants.flatMap((m) => m.tests))];
  if (!runTests(owning)) {
    console.error("mutation: the owning tests fail on the unbroken code; fix them first");
    process.exit(2);
  }

  let restore: (() => void) | undefined;
  const onSignal = () => {
    restore?.();
    process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const survived: Mutant[] = [];
  const started = Date.now();
  for (const m of mutants) {
    const path = join(REPO_ROOT, m.file);
    const original = readFileSync(path, "utf8");
    restore = () => writeFileSync(path, original);
    try {
      writeFileSync(path, original.replace(m.from, m.to));
      const killed = !runTests(m.tests);
      if (!killed) survived.push(m);
      console.log(`${killed ? "killed  " : "SURVIVED"}  ${m.id}`);
    } finally {
      restore();
      restore = undefined;
    }
  }
  const killed = mutants.length - survived.length;
  console.log(
    `\n${killed} of ${mutants.length} mutants killed (${Math.round((killed / mutants.length) * 100)} %) in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  if (survived.length) process.exit(1);
}

main();
