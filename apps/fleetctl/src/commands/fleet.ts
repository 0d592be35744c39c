/**
 * `fleetctl fleet plan|preflight --spec fleet.yaml`: the fleet spec's planning half, on
 * @fm/fleet-spec. No command here creates anything in a cloud: plan reads only the spec (and the
 * Nebius profile, for the tenant); preflight reads the provider's JSON, from `--evidence <dir>` or
 * by running the `nebius` CLI's list and get commands with the fleet's profile, and refuses (exit
 * 14) with every shortfall when anything is short, unreadable or unknown.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import {
  NebiusConfigSchema,
  buildPlan,
  evaluatePreflight,
  evidenceNeeds,
  parseFleetSpecText,
  resolveIdentity,
  type FleetPlan,
  type FleetPreflight,
  type NebiusConfig,
  type SpecIssue,
} from "@fm/fleet-spec";
import type { Ctx } from "../command-kit.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import { renderTable, type OutputOptions } from "../output.ts";
import { output } from "./common.ts";

const FORMATS = ["table", "json", "yaml"] as const;

const listing = (issues: SpecIssue[]) => issues.map((i) => `  ${i.path || "(spec)"}: ${i.message}`).join("\n");

/** A comma-separated option as a list; undefined when not given. */
function csv(value: unknown, option: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = String(value)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) throw new UsageError(`${option} names nothing`);
  return items;
}

/** ~/.nebius/config.yaml (NEBIUS_CONFIG names another), or undefined when there is none. */
async function nebiusConfig(env: NodeJS.ProcessEnv): Promise<NebiusConfig | undefined> {
  const file = env.NEBIUS_CONFIG || join(env.HOME || homedir(), ".nebius", "config.yaml");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`cannot read the Nebius config ${file} (${(err as NodeJS.ErrnoException).code})`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch {
    throw new CliError(`the Nebius config ${file} is not YAML`);
  }
  const parsed = NebiusConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) throw new CliError(`the Nebius config ${file} is not a profiles file (default:, profiles:)`);
  return parsed.data;
}

/** The spec, the tenant and the plan with the selectors applied; any problem is the command's error. */
/**
 * The fleet commands use no hub, so a global -p/--profile given to them can only be a Nebius
 * profile meant by the seed's spelling: refused, never taken silently as fleetctl's hub profile
 * while the plan runs as another account.
 */
function refuseHubProfile(ctx: Ctx): void {
  const given = ctx.opts.profile as string | undefined;
  if (given === undefined) return;
  throw new UsageError(
    `--profile ${JSON.stringify(given)} names a fleetctl hub profile, which the fleet commands do not use`,
    `for the Nebius profile to plan as, pass --nebius-profile ${given} (or set profile: in the spec)`,
  );
}

async function planFromOptions(ctx: Ctx): Promise<FleetPlan> {
  refuseHubProfile(ctx);
  const file = String(ctx.opts.spec);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read the spec ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const loaded = parseFleetSpecText(text);
  if (!loaded.ok)
    throw new UsageError(`the spec ${file} is not valid (${loaded.issues.length}):\n${listing(loaded.issues)}`);
  const options = {
    onlyProjects: csv(ctx.opts.onlyProjects, "--only-projects"),
    onlyClusters: csv(ctx.opts.onlyClusters, "--only-clusters"),
    projectPrefix: ctx.opts.projectPrefix as string | undefined,
  };
  const identity = resolveIdentity({
    specTenantId: loaded.fleet.spec.tenant_id,
    specProfile: loaded.fleet.spec.profile,
    cliProfile: ctx.opts.nebiusProfile as string | undefined,
    config: await nebiusConfig(ctx.env),
  });
  if (!identity.ok) throw new CliError(identity.message);
  const planned = buildPlan(loaded.fleet, identity.identity, options);
  if (!planned.ok)
    throw new UsageError(
      planned.kind === "selector"
        ? `the selectors do not fit the spec:\n${listing(planned.issues)}`
        : `the spec ${file} breaks ${planned.issues.length === 1 ? "a rule" : `${planned.issues.length} rules`}:\n${listing(planned.issues)}`,
    );
  return planned.plan;
}

async function structured(value: unknown, o: OutputOptions): Promise<string | undefined> {
  if (o.format === "json") return `${JSON.stringify(value, null, 2)}\n`;
  if (o.format === "yaml") return (await import("../yaml-text.ts")).yamlText(value);
  return undefined;
}

const pool = (p: { count: number; platform: string; preset: string } | null) =>
  p ? `${p.count} x ${p.platform} ${p.preset}` : "";
const gib = (n: number) => `${n} GiB`;

interface ClusterRow {
  project: string;
  target: string;
  cluster: FleetPlan["projects"][number]["clusters"][number];
}

export async function planTable(plan: FleetPlan, o: OutputOptions): Promise<string> {
  const who = plan.profile ? `profile ${plan.profile}` : "the active profile";
  const lines = [
    `fleet ${plan.fleet}: tenant ${plan.tenantId} (from the ${plan.tenantFrom}), region ${plan.region}, as ${who}`,
    "",
  ];
  const rows: ClusterRow[] = plan.projects.flatMap((p) =>
    p.clusters.map((cluster) => ({
      project: p.key,
      target: p.action === "create" ? `create ${p.projectName}` : `existing ${p.projectId}`,
      cluster,
    })),
  );
  const table = await renderTable(
    {
      kind: "cluster",
      name: (r) => r.cluster.name,
      columns: [
        { header: "project", value: (r) => r.project },
        { header: "target", value: (r) => r.target },
        { header: "cluster", value: (r) => r.cluster.name },
        { header: "backend", value: (r) => r.cluster.backend },
        { header: "cpu nodes", value: (r) => pool(r.cluster.cpuNodes) },
        { header: "gpu nodes", value: (r) => pool(r.cluster.gpuNodes) },
        { header: "reserved", value: (r) => r.cluster.gpuNodes?.capacityBlockGroup },
        { header: "gpu cluster", value: (r) => (r.cluster.enableGpuCluster ? r.cluster.infinibandFabric : "no") },
        {
          header: "driver",
          value: (r) =>
            r.cluster.gpuDriver.mode === "managed" ? `managed ${r.cluster.gpuDriver.preset}` : r.cluster.gpuDriver.mode,
        },
        { header: "filestore", value: (r) => (r.cluster.filestore ? gib(r.cluster.filestore.sizeGibibytes) : "no") },
        {
          header: "extras",
          value: (r) =>
            [
              r.cluster.kuberay && `kuberay ${r.cluster.kuberay.workerReplicas}x${r.cluster.kuberay.workerCpus}cpu`,
              r.cluster.mig && `mig ${r.cluster.mig.config}`,
              r.cluster.gpuWorkloadProfile,
            ]
              .filter(Boolean)
              .join(", "),
        },
      ],
    },
    rows,
    o,
  );
  lines.push(table.trimEnd());
  for (const p of plan.projects)
    if (p.objectStorage)
      lines.push(`bucket of ${p.key}: ${p.objectStorage.storageClass}, ${gib(p.objectStorage.sizeGibibytes)} cap`);
  for (const r of rows) for (const n of r.cluster.notes) lines.push(`note ${r.project}/${r.cluster.name}: ${n}`);
  return `${lines.join("\n")}\n`;
}

export async function plan(ctx: Ctx): Promise<void> {
  const o = output(ctx, FORMATS);
  const planned = await planFromOptions(ctx);
  ctx.out((await structured(planned, o)) ?? (await planTable(planned, o)));
}

const num = (n: number | null, unit: string) =>
  n === null ? null : unit === "byte" && n >= 1024 ** 3 ? `${Math.round((n / 1024 ** 3) * 10) / 10} GiB` : String(n);

export async function preflightTable(r: FleetPreflight, o: OutputOptions): Promise<string> {
  const lines = [`preflight ${r.fleet}: ${r.verdict.toUpperCase()} (tenant ${r.tenantId}, region ${r.region})`, ""];
  const projects = await renderTable(
    {
      kind: "project",
      name: (p) => p.key,
      columns: [
        { header: "project", value: (p) => p.key },
        { header: "action", value: (p) => p.action },
        { header: "id", value: (p) => p.projectId },
        {
          header: "verified",
          value: (p) => (p.verified ? "ok" : "failed"),
          tone: (t) => (t === "ok" ? "good" : "bad"),
        },
      ],
    },
    r.projects,
    o,
  );
  lines.push(projects.trimEnd());
  if (r.capacityBlocks.length) {
    const blocks = await renderTable(
      {
        kind: "capacity-block-group",
        name: (b) => b.id,
        columns: [
          { header: "capacity block group", value: (b) => b.id },
          { header: "platform", value: (b) => b.platform },
          { header: "fabric", value: (b) => b.fabric },
          { header: "gpus needed", value: (b) => b.requiredGpus },
          { header: "remaining", value: (b) => b.remainingGpus },
          { header: "ok", value: (b) => (b.ok ? "ok" : "failed"), tone: (t) => (t === "ok" ? "good" : "bad") },
        ],
      },
      r.capacityBlocks,
      o,
    );
    lines.push("", blocks.trimEnd());
  }
  const quotas = await renderTable(
    {
      kind: "quota",
      name: (q) => q.name,
      columns: [
        { header: "quota", value: (q) => q.name },
        { header: "required", value: (q) => num(q.required, q.unit) },
        { header: "available", value: (q) => num(q.available, q.unit) },
        { header: "limit", value: (q) => num(q.limit, q.unit) },
        {
          header: "ok",
          value: (q) => (q.ok ? "ok" : q.available === null ? "unknown" : "short"),
          tone: (t) => (t === "ok" ? "good" : "bad"),
        },
      ],
    },
    r.quotas,
    o,
  );
  lines.push("", quotas.trimEnd());
  if (r.shortfalls.length) {
    lines.push("", `shortfalls (${r.shortfalls.length}):`);
    for (const s of r.shortfalls) lines.push(`  ${s.kind} ${s.subject}: ${s.message}`);
  }
  return `${lines.join("\n")}\n`;
}

export async function preflight(ctx: Ctx): Promise<void> {
  const o = output(ctx, FORMATS);
  const planned = await planFromOptions(ctx);
  const dir = ctx.opts.evidence as string | undefined;
  // An empty --evidence (an unset shell variable) must not quietly mean "ask the provider".
  if (dir !== undefined && dir.trim() === "")
    throw new UsageError("--evidence needs a directory; leave the option out to read from the nebius CLI");
  const { directoryEvidence, gatherEvidence, nebiusCliEvidence } = await import("@fm/fleet-spec/evidence");
  const source = dir
    ? directoryEvidence(dir)
    : nebiusCliEvidence({ profile: planned.profile, env: ctx.env, bin: ctx.env.NEBIUS_BIN || "nebius" });
  const report = evaluatePreflight(planned, await gatherEvidence(evidenceNeeds(planned), source));
  ctx.out((await structured(report, o)) ?? (await preflightTable(report, o)));
  if (report.verdict === "refuse") {
    ctx.err(
      `error: preflight refused: ${report.shortfalls.length} shortfall(s); nothing may be created as it stands\n`,
    );
    process.exitCode = EXIT.PREFLIGHT_REFUSED;
  }
}
