/**
 * An agent of loops, run in the process shell (./shell.ts): it finds its site in the hub, asks
 * the agent's setup for its loops — reflectors (./reflector.ts) and controllers
 * (./controller.ts) — and runs them on the loop engine (./loop.ts) until SIGTERM, or until one
 * gives up, which stops the others: the process restarts as a whole.
 */
import type { z } from "zod";
import type { AgentKind, Site } from "@fm/domain";
import type { CommonConfig } from "./config.ts";
import { Loop, type LoopOptions, type LoopSpec } from "./loop.ts";
import { FatalSetupError } from "./setup-retry.ts";
import type { ProcessDefinition, Running, ShellContext } from "./shell.ts";

export interface AgentContext<C> extends ShellContext<C> {
  /** The site this agent serves (FM_SITE), as the hub knows it. */
  site: Site;
}

export interface AgentDefinition<E extends z.ZodRawShape> {
  kind: AgentKind;
  /** The agent's own environment variables. */
  env: E;
  /** Defaults of common variables that differ for this agent (e.g. a shorter interval). */
  envDefaults?: Partial<Record<keyof CommonConfig, string>>;
  /**
   * Builds the loops (may ask the hub or the source what to run). Called once the site is known,
   * and retried like any setup step; a FatalSetupError is not retried.
   */
  setup(ctx: AgentContext<z.infer<z.ZodObject<E>>>): Promise<LoopSpec[]>;
}

/** The process definition of an agent of loops. */
export function loopAgent<E extends z.ZodRawShape>(def: AgentDefinition<E>): ProcessDefinition<E> {
  return {
    kind: def.kind,
    title: `${def.kind} agent`,
    env: def.env,
    ...(def.envDefaults ? { envDefaults: def.envDefaults } : {}),
    async start(ctx): Promise<Running | undefined> {
      const { config, hub, log } = ctx;
      const site = await ctx.retry("resolve site", async () => {
        const s = await hub.findSite(config.FM_SITE);
        if (!s) throw new FatalSetupError(`site '${config.FM_SITE}' does not exist in the hub`);
        return s;
      });
      if (!site) return undefined; // stopped while waiting
      const specs = await ctx.retry("setup", () => def.setup({ ...ctx, site }));
      if (!specs) return undefined;
      const loops = specs.map((s) => new Loop(s, loopOptions(config), ctx.metrics, log, ctx.now));
      if (!loops.length) log.warn("nothing to run at this site; serving /healthz and heartbeats only");
      return { loops, done: runLoops(loops, ctx.signal) };
    },
  };
}

export function loopOptions(config: CommonConfig): LoopOptions {
  return {
    intervalMs: config.FM_REFLECT_INTERVAL_S * 1000,
    backoffBaseMs: config.FM_BACKOFF_BASE_MS,
    backoffMaxMs: config.FM_BACKOFF_MAX_S * 1000,
    maxConsecutiveFailures: config.FM_MAX_CONSECUTIVE_FAILURES,
  };
}

/** Runs every loop until `signal` aborts; the first to fail stops the others, and its error is thrown. */
export async function runLoops(loops: readonly Loop[], signal: AbortSignal): Promise<void> {
  const group = new AbortController();
  const stop = () => group.abort();
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  const failures: unknown[] = [];
  try {
    await Promise.all(
      loops.map((l) =>
        l.run(group.signal).catch((err: unknown) => {
          failures.push(err);
          stop();
        }),
      ),
    );
  } finally {
    signal.removeEventListener("abort", stop);
  }
  if (failures.length) throw failures[0];
}
