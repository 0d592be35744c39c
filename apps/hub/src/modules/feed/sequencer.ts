/**
 * The hub's feed sequencer (see repo.ts for what sequencing is): run on every commit
 * notification and by a reader whose page says committed events still wait for a position.
 * After positioning a large batch it refreshes the event table's statistics once, so the
 * statements that look for unpositioned events keep using their partial index (repo.analyze).
 */
import type { FastifyBaseLogger } from "fastify";
import type { PrismaClient } from "../../db/client.ts";
import type { FeedRepo } from "./repo.ts";

/**
 * Events positioned in one run from which the statistics are refreshed. A reflection's
 * ordinary push changes tens to hundreds of devices; a batch this large is a bulk write (a
 * first load, a seed, many agents after an outage), after which the statistics, if taken
 * before, describe a table whose events had no position. ANALYZE samples at most 30,000 rows
 * (default_statistics_target 100), a fraction of a second whatever the table's size.
 */
export const ANALYZE_AFTER_POSITIONED = 1000;

export class FeedSequencer {
  private analyzing: Promise<void> | undefined;

  constructor(
    private readonly o: {
      prisma: PrismaClient;
      repo: FeedRepo;
      log: FastifyBaseLogger;
      analyzeAfter?: number;
    },
  ) {}

  /** Positions what waits; returns how many it positioned. */
  async run(opts: { pending?: boolean } = {}): Promise<number> {
    const positioned = await this.o.repo.sequence(this.o.prisma, opts);
    if (positioned >= (this.o.analyzeAfter ?? ANALYZE_AFTER_POSITIONED)) await this.analyze(positioned);
    return positioned;
  }

  /** One ANALYZE at a time per process: readers that positioned meanwhile wait for the same one. */
  private analyze(positioned: number): Promise<void> {
    this.analyzing ??= this.o.repo
      .analyze(this.o.prisma)
      .then(() => this.o.log.info({ positioned }, "feed statistics refreshed after a large batch"))
      // Statistics only steer plans: a failure (a role that does not own the table) costs speed.
      .catch((err: Error) => this.o.log.warn({ err: err.message }, "feed statistics not refreshed"))
      .finally(() => (this.analyzing = undefined));
    return this.analyzing;
  }
}
