import type pg from "pg";
import { FEED_CURSOR_EXPIRED, INVENTORY_SNAPSHOT_PATH, type FeedQuery } from "@fm/domain";
import { Gone, NotFound } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { siteRows } from "../sites/public.ts";
import type { FeedRepo } from "./repo.ts";
import type { FeedNotifier } from "./notifier.ts";
import type { FeedSequencer } from "./sequencer.ts";

/** While long-polling, re-check at least this often even without a notification. */
const RECHECK_MS = 500;

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

async function sequencedHead(prisma: PrismaClient, sequencer: FeedSequencer, repo: FeedRepo): Promise<bigint> {
  await sequencer.run();
  return repo.head(prisma);
}

export function createFeedService({
  prisma,
  pool,
  repo,
  sequencer,
  notifier,
}: {
  prisma: PrismaClient;
  /** The hub's pool: pages are read as named statements (through Prisma without it). */
  pool?: pg.Pool;
  repo: FeedRepo;
  sequencer: FeedSequencer;
  notifier: FeedNotifier;
}) {
  return {
    /** A page (FeedPage) as its JSON text: built by PostgreSQL, sent as it comes (see repo.ts). */
    async readJson(query: FeedQuery, signal?: AbortSignal): Promise<string> {
      // `latest`: from the head as it is now (a tail that shows only what comes next).
      const after = query.after === "latest" ? await sequencedHead(prisma, sequencer, repo) : BigInt(query.after);
      // Unknown slugs are refused rather than read as "no events": a typo would look like quiet.
      const siteIds = query.site.length ? await feedSiteIdsOf(prisma, repo, query.site) : undefined;
      const deadline = Date.now() + query.wait * 1000;
      for (;;) {
        let page = await repo.readPageJson(prisma, pool, after, query.limit, siteIds);
        // Committed events wait for a position (their commit's notification is still on its way,
        // or was lost): give them theirs and read again, so a reader sees every change committed
        // before it asked. The statement says so itself: no pre-check round trip per page.
        if (page.pending) {
          await sequencer.run({ pending: true });
          page = await repo.readPageJson(prisma, pool, after, query.limit, siteIds);
        }
        const { head, purgedThrough } = page;
        // Read in the page's snapshot (see repo.ts): at or above purged_through, nothing was missed.
        if (after < purgedThrough) throw expired(after, purgedThrough);
        // Positions only grow, so a cursor above the head was never given by this feed (a
        // database restored from a backup, another hub): waiting would skip what lies between.
        if (after > head) throw ahead(after, head);
        const full = page.count === query.limit;
        // A filtered reader moves past the other sites' events too; its head is everyone's.
        const nextAfter = full ? page.last! : head > after ? head : after;
        const remaining = deadline - Date.now();
        if (nextAfter > after || remaining <= 0 || signal?.aborted || notifier.closed) {
          // FeedPageSchema's members in its order, as JSON.stringify of the page wrote them.
          return `{"items":[${page.itemsJson}],"nextAfter":"${nextAfter}","head":"${head}"}`;
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
  const sites = [...(await siteRows.findBySlugs(prisma, slugs)), ...(await repo.deletedSites(prisma, slugs))];
  const missing = slugs.filter((slug) => !sites.some((s) => s.slug === slug));
  if (missing.length) throw unknownSites(missing);
  return [...new Set(sites.map((s) => s.id))];
}

/** The ids of the sites with these slugs now; an unknown slug is a 404. */
export async function siteIdsOf(prisma: PrismaClient, slugs: string[]): Promise<string[]> {
  const found = await siteRows.findBySlugs(prisma, slugs);
  const missing = slugs.filter((slug) => !found.some((s) => s.slug === slug));
  if (missing.length) throw unknownSites(missing);
  return found.map((s) => s.id);
}
