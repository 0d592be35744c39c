/**
 * `job wait`: follows a job until it ends, asking the hub every --interval. On a terminal, a
 * progress bar on stderr and each step's change printed above it; when stdout is a pipe or a
 * file, one plain line on stdout per change (what a CI log keeps) and no bar. The exit code
 * says how it ended (exit-codes.ts).
 */
import type { HubClient } from "@fm/clients";
import { TERMINAL_JOB_STATUSES, type Job } from "@fm/domain";
import type { Ctx } from "./command-kit.ts";
import { parseDuration } from "./duration.ts";
import { EXIT } from "./exit-codes.ts";
import { renderOne, type OutputOptions } from "./output.ts";
import { terminalSafe } from "./terminal-text.ts";
import { JOB_VIEW } from "./commands/jobs.ts";

type Step = Job["steps"][number];

/** The step lines to print for the change from `before` to `after` (all of them the first time). */
export function stepChanges(before: Job | undefined, after: Job): string[] {
  const lines: string[] = [];
  if (!before || before.status !== after.status)
    lines.push(`job ${terminalSafe(after.name)} ${after.status} ${Math.round(after.progress * 100)}%`);
  for (const s of after.steps) {
    const old = before?.steps.find((b) => b.name === s.name);
    if (!old && s.status === "PENDING") continue;
    if (old && old.status === s.status && old.message === s.message) continue;
    lines.push(`  step ${s.name} ${s.status}${s.message ? `: ${terminalSafe(s.message)}` : ""}`);
  }
  if (after.error && (!before?.error || before.error.message !== after.error.message))
    lines.push(`  error${after.error.step ? ` in ${after.error.step}` : ""}: ${terminalSafe(after.error.message)}`);
  return lines;
}

export function renderSteps(job: Job): string {
  const width = Math.max(4, ...job.steps.map((s) => s.name.length));
  const rows = job.steps.map((s: Step) =>
    `  ${s.name.padEnd(width)}  ${s.status.padEnd(9)}  ${terminalSafe(s.message ?? "")}`.trimEnd(),
  );
  const error = job.error
    ? [`error${job.error.step ? ` in ${job.error.step}` : ""}: ${terminalSafe(job.error.message)}`]
    : [];
  return `\nSTEPS\n${rows.join("\n")}\n${error.map((e) => `${e}\n`).join("")}`;
}

export const exitForJob = (status: Job["status"]): number =>
  status === "SUCCEEDED" ? EXIT.OK : status === "CANCELLED" ? EXIT.JOB_CANCELLED : EXIT.JOB_FAILED;

export async function waitForJob(ctx: Ctx, hub: HubClient, first: Job, out: OutputOptions): Promise<void> {
  const intervalMs = parseDuration(String(ctx.opts.interval ?? "2s"), "--interval");
  const timeoutMs = ctx.opts.timeout === undefined ? undefined : parseDuration(String(ctx.opts.timeout), "--timeout");
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  const live = out.format === "table" || out.format === "wide";
  // The bar only when both streams are a terminal: with stdout piped or redirected (`| tee log`),
  // the lines go there, plain, and no bar is drawn.
  const tty = live && Boolean(process.stderr.isTTY) && Boolean(process.stdout.isTTY);
  const bar = tty ? await progressBar(first) : undefined;
  const say = (lines: string[]) => {
    if (!live) return;
    for (const l of lines) {
      if (bar) bar.log(l);
      else ctx.out(`${l}\n`);
    }
  };
  let job = first;
  say(stepChanges(undefined, job));
  try {
    while (!TERMINAL_JOB_STATUSES.includes(job.status)) {
      bar?.update(job);
      if (Date.now() >= deadline) {
        bar?.stop();
        // kubectl wait's words, on stderr whatever the format; -o json|yaml|name still print the job as it stands.
        ctx.err(
          `error: timed out waiting for the condition: job ${terminalSafe(job.name)} still ${job.status} after ${String(ctx.opts.timeout)} (it goes on)\n`,
        );
        if (!live) ctx.out(await renderOne(JOB_VIEW, job, out));
        process.exitCode = EXIT.JOB_TIMEOUT;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
      const next = await hub.getJob(job.id);
      say(stepChanges(job, next));
      job = next;
    }
    bar?.update(job);
  } finally {
    bar?.stop();
  }
  if (!live) ctx.out(await renderOne(JOB_VIEW, job, out));
  process.exitCode = exitForJob(job.status);
}

/** cli-progress on stderr, with lines logged above the bar; loaded only on a terminal. */
async function progressBar(job: Job) {
  // The CommonJS module itself (its default export), as under Node so in the bundled build.
  const { MultiBar, Presets } = (await import("cli-progress")).default;
  const multi = new MultiBar(
    {
      format: " {bar} {percentage}% | {status} | {step}",
      hideCursor: true,
      clearOnComplete: false,
      stream: process.stderr,
    },
    Presets.shades_classic,
  );
  const payload = (j: Job) => ({
    status: j.status,
    step: j.steps.find((s) => s.status === "RUNNING")?.name ?? "-",
  });
  const bar = multi.create(100, Math.round(job.progress * 100), payload(job));
  return {
    update: (j: Job) => bar.update(Math.round(j.progress * 100), payload(j)),
    log: (line: string) => multi.log(`${line}\n`),
    stop: () => multi.stop(),
  };
}
