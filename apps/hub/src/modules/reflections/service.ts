/**
 * Reflections: a source's complete view of one site, pushed by its agent. Items are matched
 * to devices (Ironic: node UUID, then name, then serial; SLURM: node name, then device name;
 * health: device name); only what changed is written, in one transaction, through the device
 * service (history, audit, feed). Devices the source observed before and no longer lists have
 * that source's fields cleared (`missing`). A push older than the last accepted one for the
 * (site, source) is refused, so a slow retry cannot overwrite newer state.
 */
import { BadRequest, Conflict, Forbidden, agentMayWriteSource, itemSchemaFor } from "@fm/domain";
import type { ImpairmentPolicy, NetboxItem, ReflectionBody, ReflectionResult, ReflectionSource } from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import type { DeviceService } from "../devices/service.ts";
import { applyImpairment } from "../impairment/service.ts";
import { requireSite } from "../sites/repo.ts";
import { adapterFor, applyAnnotations } from "./annotations.ts";
import { applyNetbox } from "./netbox.ts";
import type { ReflectionRepo } from "./repo.ts";

function parseItems(source: ReflectionSource, items: unknown[]): unknown[] {
  const schema = itemSchemaFor(source);
  const errors: { path: string; message: string }[] = [];
  const parsed = items.map((item, n) => {
    const r = schema.safeParse(item);
    if (!r.success)
      for (const issue of r.error.issues.slice(0, 5))
        if (errors.length < 50)
          errors.push({ path: ["body", "items", n, ...issue.path].join("."), message: issue.message });
    return r.success ? r.data : undefined;
  });
  if (errors.length)
    throw new BadRequest(
      "validation_failed",
      `${errors.length} invalid item field(s); first: ${errors[0]!.path}: ${errors[0]!.message}`,
      { errors },
    );
  return parsed;
}

export function createReflectionService({
  prisma,
  repo,
  devices,
  impairment,
}: {
  prisma: PrismaClient;
  repo: ReflectionRepo;
  devices: DeviceService;
  /** Impairment cordon and release after each health push; off when undefined. */
  impairment?: ImpairmentPolicy | undefined;
}) {
  return {
    async apply(
      ctx: RequestContext,
      siteId: string,
      source: ReflectionSource,
      body: ReflectionBody,
    ): Promise<ReflectionResult> {
      const agent = ctx.principal.agent;
      if (!agent || !agentMayWriteSource(agent, siteId, source)) {
        throw new Forbidden("reflection_not_allowed", `This agent may not write '${source}' state at this site`);
      }
      const items = parseItems(source, body.items);
      const observedAt = new Date(body.observedAt);
      return prisma.$transaction(
        async (tx) => {
          const t0 = performance.now();
          await requireSite(tx, siteId);
          await checkNotStale(repo, tx, siteId, source, observedAt);
          const result =
            source === "netbox"
              ? await applyNetbox(tx, ctx, devices, siteId, items as NetboxItem[], observedAt)
              : await applyAnnotations(tx, ctx, devices, adapterFor(source), source, siteId, items, observedAt);
          if (source === "health" && impairment)
            await applyImpairment(tx, ctx, devices, siteId, impairment, observedAt);
          await repo.saveLastPush(tx, siteId, source, observedAt);
          ctx.log.info(
            { siteId, source, ...result, unmatchedItems: undefined, ms: Math.round(performance.now() - t0) },
            "reflection applied",
          );
          return result;
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
    },
  };
}

async function checkNotStale(
  repo: ReflectionRepo,
  tx: Db,
  siteId: string,
  source: string,
  observedAt: Date,
): Promise<void> {
  // Serialise pushes of one (site, source): the row lock holds until this push commits.
  const last = await repo.lockLastPush(tx, siteId, source);
  if (last && last.getTime() > observedAt.getTime()) {
    throw new Conflict(
      "stale_reflection",
      `A newer push (observed at ${last.toISOString()}) was already applied for this site and source`,
    );
  }
}
export type ReflectionService = ReturnType<typeof createReflectionService>;
