/**
 * Reflections: a source's complete view of one site, pushed by its agent. Items are matched
 * to devices (Ironic: node UUID, then name, then serial; SLURM: node name, then device name;
 * health: device name); only what changed is written, in one transaction, through the device
 * service (history, audit, feed). Devices the source observed before and no longer lists have
 * that source's fields cleared (`missing`). A push older than the last accepted one for the
 * (site, source) is refused, so a slow retry cannot overwrite newer state.
 */
import { BadRequest, Conflict, Forbidden, MAX_CLOCK_SKEW_MS, NotFound, Unprocessable } from "@fm/domain";
import { agentMayWriteSource, itemSchemaFor, nameKey, uniqueItemField } from "@fm/domain";
import type {
  ImpairmentPolicy,
  NetboxItem,
  NetboxReflectionSite,
  ReflectionBody,
  ReflectionResult,
  ReflectionSource,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { analyzeInventory } from "../devices/public.ts";
import type { DeviceService } from "../devices/service.ts";
import { recordChange } from "../../changes/recorder.ts";
import { reconcileDiscrepancies } from "../discrepancies/public.ts";
import { applyImpairment } from "../impairment/public.ts";
import { siteRows } from "../sites/public.ts";
import { siteFields } from "../sites/public.ts";
import { applyAnnotations } from "./annotations.ts";
import { annotationsFor } from "./sources/index.ts";
import { applyNetbox } from "./netbox.ts";
import type { NetboxSettingsRepo } from "../netbox-settings/public.ts";
import { roleClassMapping } from "../netbox-settings/public.ts";
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
  const field = uniqueItemField(source);
  if (field && !errors.length) {
    const first = new Map<string, number>();
    parsed.forEach((item, n) => {
      const value = (item as Record<string, string>)[field]!;
      // Names are one name whatever their case (`nameKey`): NetBox refuses such a pair too.
      const key = field === "name" ? nameKey(value) : value;
      const at = first.get(key);
      if (at === undefined) first.set(key, n);
      else if (errors.length < 50)
        errors.push({
          path: `body.items.${n}.${field}`,
          message: `'${value}' repeats item ${at}${field === "name" ? " (names are compared regardless of case)" : ""}: must be unique`,
        });
    });
  }
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
  settings,
  impairment,
}: {
  prisma: PrismaClient;
  repo: ReflectionRepo;
  devices: DeviceService;
  /** The NetBox settings, whose role mapping (role slug -> device class) wins over a push's. */
  settings: NetboxSettingsRepo;
  /** Impairment cordon and release after each health push (none when undefined: the hub always passes one). */
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
      if (body.site && source !== "netbox")
        throw new BadRequest("validation_failed", "Only a NetBox push may carry `site`", {
          errors: [{ path: "body.site", message: "only for the netbox source" }],
        });
      const items = parseItems(source, body.items);
      const observedAt = new Date(body.observedAt);
      checkClock(observedAt);
      const result = await prisma.$transaction(
        async (tx) => {
          const t0 = performance.now();
          const last = await checkNotStale(repo, tx, siteId, source, observedAt);
          if (body.site) await applyNetboxSite(tx, ctx, siteId, body.site);
          // NetBox's push reconciles the whole site, so it names no unmatched item and no touched device.
          const { result, unmatchedKeys, touched } =
            source === "netbox"
              ? {
                  result: await applyNetbox(
                    tx,
                    ctx,
                    devices,
                    siteId,
                    items as NetboxItem[],
                    observedAt,
                    await roleClassMapping(tx, settings),
                  ),
                  unmatchedKeys: [],
                  touched: new Set<string>(),
                }
              : await applyAnnotations(tx, ctx, devices, annotationsFor(source, items), siteId, observedAt);
          if (source === "health" && impairment)
            for (const id of (await applyImpairment(tx, ctx, devices, siteId, impairment, observedAt)).changedIds)
              touched.add(id);
          await repo.saveLastPush(tx, siteId, source, observedAt);
          // Only the devices this push touched can have new or cleared discrepancies, unless the
          // push is NetBox's (device classes, devices created and deleted) or its source's first
          // at the site (the site's first Ironic report opens one for every unreported device).
          const whole = source === "netbox" || last.getTime() <= 0; // epoch: the row lockLastPush made
          await reconcileDiscrepancies(
            tx,
            siteId,
            new Date(),
            { source, keys: unmatchedKeys },
            whole ? undefined : touched,
          );
          ctx.log.info(
            {
              siteId,
              source,
              ...result,
              unmatchedItems: undefined,
              conflicts: result.conflicts?.length,
              ms: Math.round(performance.now() - t0),
            },
            "reflection applied",
          );
          if (result.conflicts?.length)
            ctx.log.warn(
              { siteId, source, conflicts: result.conflicts },
              "NetBox push disagreed with fleet-wide rows the hub owns: not applied",
            );
          return result;
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
      // A bulk write (a first load): the planner's statistics no longer describe the site.
      const written = result.created + result.updated + result.missing;
      if (written >= BULK_WRITE && written * 10 >= items.length) await analyzeInventory(prisma);
      return result;
    },
  };
}

/**
 * NetBox's name and ids of the push's own site (the URL's: the agent may write its own site's
 * NetBox fields and nothing else), written only when they differ (audited, `site.updated`).
 */
async function applyNetboxSite(tx: Db, ctx: RequestContext, siteId: string, pushed: NetboxReflectionSite) {
  const current = (await siteRows.lockById(tx, siteId))!;
  if (
    current.name === pushed.name &&
    current.netboxSiteId === pushed.netboxSiteId &&
    current.netboxClusterId === pushed.netboxClusterId
  )
    return;
  const updated = await siteRows.update(tx, siteId, pushed);
  await recordChange(tx, ctx, {
    resourceType: "site",
    resourceId: siteId,
    siteId,
    verb: "updated",
    before: siteFields(current),
    after: siteFields(updated),
  });
  ctx.log.info({ siteId, name: pushed.name, netboxSiteId: pushed.netboxSiteId }, "site updated from NetBox");
}

/** Devices a push must write, and at least a tenth of the items, for the tables to be re-analysed. */
const BULK_WRITE = 1000;

/**
 * An observation from the future means the agent's clock is ahead: stored, it would outlive
 * every correct push after it (they would all look stale) until the clock caught up.
 */
function checkClock(observedAt: Date, now = Date.now()): void {
  const aheadMs = observedAt.getTime() - now;
  if (aheadMs <= MAX_CLOCK_SKEW_MS) return;
  const detail = `observedAt is ${Math.round(aheadMs / 1000)} s ahead of the hub's clock (at most ${MAX_CLOCK_SKEW_MS / 1000} s allowed): the agent's clock is wrong, check its time synchronisation`;
  throw new Unprocessable("clock_skew", detail, { errors: [{ path: "body.observedAt", message: detail }] });
}

/** The observed-at of the last push accepted for the (site, source), if any; refuses an older one. */
async function checkNotStale(
  repo: ReflectionRepo,
  tx: Db,
  siteId: string,
  source: string,
  observedAt: Date,
): Promise<Date> {
  // Serialise pushes of one (site, source): the row lock holds until this push commits.
  const last = await repo.lockLastPush(tx, siteId, source);
  if (!last) throw new NotFound("site_not_found", `No site with id ${siteId}`);
  if (last.getTime() > observedAt.getTime()) {
    throw new Conflict(
      "stale_reflection",
      `A newer push (observed at ${last.toISOString()}) was already applied for this site and source`,
    );
  }
  return last;
}
export type ReflectionService = ReturnType<typeof createReflectionService>;
