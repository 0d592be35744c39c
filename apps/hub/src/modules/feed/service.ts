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

const ahead = (after: bigint, head: bigint) =>
  new Gone(
    FEED_CURSOR_EXPIRED,
    `Position ${after} is beyond this feed's head (${head}): the cursor was not given by this feed (a restored database, another hub). Read the inventory snapshot at ${INVENTORY_SNAPSHOT_PATH} and continue the feed from its position.`,
  );

async function sequencedHead(prisma: PrismaClient, repo: FeedRepo): Promise<bigint> {
  await repo.sequence(prisma);
  return repo.head(prisma);
}

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
      // `latest`: from the head as it is now (a tail that shows only what comes next).
      const after = query.after === "latest" ? await sequencedHead(prisma, repo) : BigInt(query.after);
      // Unknown slugs are refused rather than read as "no events": a typo would look like quiet.
      const siteIds = query.site.length ? await feedSiteIdsOf(prisma, repo, query.site) : undefined;
      const deadline = Date.now() + query.wait * 1000;
      for (;;) {
        await repo.sequence(prisma);
        // Read the head first: every position up to it is given, so the page below it is final.
        const head = await repo.head(prisma);
        const events = await repo.readAfter(prisma, after, query.limit, { upTo: head, siteIds });
        // Checked after reading (see repo.ts): still at or above purged_through, nothing was missed.
        const purgedThrough = await repo.purgedThrough(prisma);
        if (after < purgedThrough) throw expired(after, purgedThrough);
        // Positions only grow, so a cursor above the head was never given by this feed (a
        // database restored from a backup, another hub): waiting would skip what lies between.
        if (after > head) throw ahead(after, head);
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

/**
 * The ids of the sites a feed reader's slugs name: the current sites and those deleted while
 * holding the slug (so a reader still gets a deleted site's events up to its deletion, and a site
 * deleted and re-created under its slug is both). A slug no site ever had is a 404.
 */
async function feedSiteIdsOf(prisma: PrismaClient, repo: FeedRepo, slugs: string[]): Promise<string[]> {
  const sites = [...(await siteRepo.findBySlugs(prisma, slugs)), ...(await repo.deletedSites(prisma, slugs))];
  const missing = slugs.filter((slug) => !sites.some((s) => s.slug === slug));
  if (missing.length) throw unknownSites(missing);
  return [...new Set(sites.map((s) => s.id))];
}

/** The ids of the sites with these slugs now; an unknown slug is a 404. */
export async function siteIdsOf(prisma: PrismaClient, slugs: string[]): Promise<string[]> {
  const found = await siteRepo.findBySlugs(prisma, slugs);
  const missing = slugs.filter((slug) => !found.some((s) => s.slug === slug));
  if (missing.length) throw unknownSites(missing);
  return found.map((s) => s.id);
}
