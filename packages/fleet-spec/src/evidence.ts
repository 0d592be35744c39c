/**
 * Where preflight evidence comes from (Node only; the rest of the package is pure): a directory
 * of the provider's JSON saved earlier, or the `nebius` CLI run read-only with the fleet's
 * profile. Both behind one interface, so the verdict never depends on how the JSON arrived, and
 * a failure of either is a refusal (preflight.ts), never a skipped check.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Evidence, EvidenceNeeds, Read } from "./preflight.ts";

/** Each method returns the provider's JSON or throws an Error saying why it could not. */
export interface EvidenceSource {
  quotaAllowances(tenantId: string): Promise<unknown>;
  projects(tenantId: string): Promise<unknown>;
  project(projectId: string): Promise<unknown>;
  capacityBlockGroups(tenantId: string): Promise<unknown>;
  capacityIntervals(groupId: string): Promise<unknown>;
  capacityBlockGroupResources(groupId: string): Promise<unknown>;
}

/** The file each piece of evidence is saved as (docs/fleet-spec.md lists the command behind each). */
export const EVIDENCE_FILES = {
  quotaAllowances: () => "quota-allowances.json",
  projects: () => "projects.json",
  project: (id: string) => `project-${id}.json`,
  capacityBlockGroups: () => "capacity-block-groups.json",
  capacityIntervals: (id: string) => `capacity-intervals-${id}.json`,
  capacityBlockGroupResources: (id: string) => `capacity-block-group-resources-${id}.json`,
} as const;

function parseJson(text: string, what: string): unknown {
  if (!text.trim()) throw new Error(`${what} is empty`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not JSON (${(err as Error).message})`);
  }
}

/** Evidence saved in a directory, one file per provider call. The tenant ID is not in the file names. */
export function directoryEvidence(dir: string): EvidenceSource {
  const read = async (name: string) => {
    let text: string;
    try {
      text = await readFile(join(dir, name), "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(
        code === "ENOENT" ? `${name} is missing from ${dir}` : `${name} cannot be read (${code ?? "error"})`,
      );
    }
    return parseJson(text, name);
  };
  return {
    quotaAllowances: () => read(EVIDENCE_FILES.quotaAllowances()),
    projects: () => read(EVIDENCE_FILES.projects()),
    project: (id) => read(EVIDENCE_FILES.project(id)),
    capacityBlockGroups: () => read(EVIDENCE_FILES.capacityBlockGroups()),
    capacityIntervals: (id) => read(EVIDENCE_FILES.capacityIntervals(id)),
    capacityBlockGroupResources: (id) => read(EVIDENCE_FILES.capacityBlockGroupResources(id)),
  };
}

export interface NebiusCliOptions {
  /** The profile every call runs with (`--profile`); empty: the CLI's active profile. */
  profile: string;
  /** The executable; default `nebius` from PATH. */
  bin?: string;
  env?: NodeJS.ProcessEnv;
  /** Per call, in milliseconds. */
  timeoutMs?: number;
}

/**
 * The `nebius` CLI, read-only calls only (list and get), each with `--format json`; the
 * commands are the seed's (docs/fleet-spec.md). Its stderr's first line explains a failure; the
 * CLI prints no credential there, and nothing here passes one on its command line.
 */
export function nebiusCliEvidence(o: NebiusCliOptions): EvidenceSource {
  const bin = o.bin ?? "nebius";
  const run = (args: string[]) =>
    new Promise<unknown>((resolve, reject) => {
      const argv = [...(o.profile ? ["--profile", o.profile] : []), ...args, "--format", "json"];
      execFile(
        bin,
        argv,
        { env: o.env ?? process.env, timeout: o.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const what = `nebius ${args.slice(0, 3).join(" ")}`;
          if (err) {
            const e = err as NodeJS.ErrnoException & { killed?: boolean };
            const reason =
              e.code === "ENOENT"
                ? `the nebius CLI (${bin}) is not installed`
                : e.killed
                  ? "timed out"
                  : `exit ${String(e.code)}: ${String(stderr).trim().split("\n")[0]?.slice(0, 300) || "no message"}`;
            return reject(new Error(`${what} failed: ${reason}`));
          }
          try {
            resolve(parseJson(String(stdout), `the output of ${what}`));
          } catch (parseErr) {
            reject(parseErr);
          }
        },
      );
    });
  return {
    quotaAllowances: (tenant) => run(["quotas", "quota-allowance", "list", "--parent-id", tenant, "--all"]),
    projects: (tenant) => run(["iam", "project", "list", "--parent-id", tenant, "--all"]),
    project: (id) => run(["iam", "project", "get", "--id", id]),
    capacityBlockGroups: (tenant) => run(["capacity", "capacity-block-group", "list", "--parent-id", tenant, "--all"]),
    capacityIntervals: (id) => run(["capacity", "capacity-interval", "list", "--parent-id", id, "--all"]),
    capacityBlockGroupResources: (id) => run(["capacity", "capacity-block-group", "list-resources", "--id", id]),
  };
}

const settle = (p: Promise<unknown>): Promise<Read> =>
  p.then(
    (value) => ({ ok: true, value }),
    (err: unknown) => ({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );

/** Every piece of evidence the plan needs, each read or its failure recorded (never thrown). */
export async function gatherEvidence(needs: EvidenceNeeds, source: EvidenceSource): Promise<Evidence> {
  const byId = async (ids: string[], get: (id: string) => Promise<unknown>) =>
    Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await settle(get(id))] as const)));
  const blocks = needs.capacityBlockGroups;
  const [quotaAllowances, projects, projectsById, capacityBlockGroups, capacityIntervals, capacityBlockGroupResources] =
    await Promise.all([
      settle(source.quotaAllowances(needs.tenantId)),
      settle(source.projects(needs.tenantId)),
      byId(needs.projectIds, (id) => source.project(id)),
      blocks.length ? settle(source.capacityBlockGroups(needs.tenantId)) : Promise.resolve(null),
      byId(blocks, (id) => source.capacityIntervals(id)),
      byId(blocks, (id) => source.capacityBlockGroupResources(id)),
    ]);
  return {
    quotaAllowances,
    projects,
    projectsById,
    capacityBlockGroups,
    capacityIntervals,
    capacityBlockGroupResources,
  };
}
