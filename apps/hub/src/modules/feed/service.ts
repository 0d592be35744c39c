import type { FeedPage, InventoryEvent } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
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
    async read(query: { after: string; limit: number; wait: number }, signal?: AbortSignal): Promise<FeedPage> {
      const after = BigInt(query.after);
      const deadline = Date.now() + query.wait * 1000;
      for (;;) {
        await repo.sequence(prisma);
        const events = await repo.readAfter(prisma, after, query.limit);
        const remaining = deadline - Date.now();
        if (events.length > 0 || remaining <= 0 || signal?.aborted || notifier.closed) {
          return {
            items: events.map(toInventoryEvent),
            nextAfter: events.length ? events[events.length - 1]!.position.toString() : query.after,
          };
        }
        await notifier.wait(Math.min(remaining, RECHECK_MS), signal);
      }
    },
  };
}
export type FeedService = ReturnType<typeof createFeedService>;
