import {
  FEED_CURSOR_EXPIRED,
  INVENTORY_SNAPSHOT_PATH,
  type FeedPage,
  type FeedQuery,
  type InventoryEvent,
} from "@fm/domain";
import { Gone, NotFound } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { siteRepo } from "../sites/repo.ts";
import type { FeedRepo, StoredInventoryEvent } from "./repo.ts";
import type { FeedNotifier } from "./notifier.ts";

/** While long-polling, re-check at least this often even without a notification. */
const RECHECK_MS = 500;

/** Events are stored as their writers typed them (see the change recorder). */
export const toInventoryEvent = (e: StoredInventoryEvent): InventoryEvent =>
  ({
    position: e.position.toString(),
    type: e.type,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    siteId: e.siteId,
    data: e.data,
    requestId: e.requestId,
    occurredAt: e.occurredAt.toISOString(),
  }) as InventoryEvent;

const expired = (after: bigint, purgedThrough: bigint) =>
  new Gone(
    FEED_CURSOR_EXPIRED,
    `The feed no longer keeps the events after position ${after} (events up to ${purgedThrough} were purged by retention). Read the inventory snapshot at ${INVENTORY_SNAPSHOT_PATH} and continue the feed from its position.`,
  );

export function createFeedService({
  prisma,
  repo,
  notifier,
}: {
  prisma: PrismaClient;
  repo: FeedRepo;
  notifier: FeedNotifier;
}) {
  return {
    async read(query: FeedQuery, signal?: AbortSignal): Promise<FeedPage> {
      const after = BigInt(query.after);
      // Unknown slugs are refused rather than read as "no events": a typo would look like quiet.
      const siteIds = query.site.length ? await siteIdsOf(prisma, query.site) : undefined;
      const deadline = Date.now() + query.wait * 1000;
      for (;;) {
        await repo.sequence(prisma);
        // Read the head first: every position up to it is given, so the page below it is final.
        const head = await repo.head(prisma);
        const events = await repo.readAfter(prisma, after, query.limit, { upTo: head, siteIds });
        // Checked after reading (see repo.ts): still at or above purged_through, nothing was missed.
        const purgedThrough = await repo.purgedThrough(prisma);
        if (after < purgedThrough) throw expired(after, purgedThrough);
        const full = events.length === query.limit;
        // A filtered reader moves past the other sites' events too; its head is everyone's.
        const nextAfter = full ? events[events.length - 1]!.position : head > after ? head : after;
        const remaining = deadline - Date.now();
        if (nextAfter > after || remaining <= 0 || signal?.aborted || notifier.closed) {
          return {
            items: events.map(toInventoryEvent),
            nextAfter: nextAfter.toString(),
            head: head.toString(),
          };
        }
        await notifier.wait(Math.min(remaining, RECHECK_MS), signal);
      }
    },
  };
}
export type FeedService = ReturnType<typeof createFeedService>;

export const unknownSites = (slugs: string[]) =>
  new NotFound("site_not_found", `No site with slug ${slugs.map((s) => `'${s}'`).join(", ")}`);

/** The ids of the sites with these slugs; an unknown slug is a 404. */
export async function siteIdsOf(prisma: PrismaClient, slugs: string[]): Promise<string[]> {
  const found = await siteRepo.findBySlugs(prisma, slugs);
  const missing = slugs.filter((slug) => !found.some((s) => s.slug === slug));
  if (missing.length) throw unknownSites(missing);
  return found.map((s) => s.id);
}
