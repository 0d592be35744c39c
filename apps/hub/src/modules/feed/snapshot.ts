/**
 * The inventory snapshot: every site, device role and device, exactly as of one feed position P,
 * so a reader can load it and continue the feed from `?after=P` with no gap and no double.
 *
 * Why "exactly as of P" holds. A change and its event commit together (same transaction). The
 * snapshot must see exactly the changes whose events have positions <= P. The naive way, "read
 * the head, then read the data", fails twice: a change committed between the two reads is in
 * the data but its event gets a position > P (a double), and a change committed but not yet
 * positioned at the first read is in the data and also gets a position > P (a double again).
 * So the snapshot is taken like this:
 *   1. A reading transaction is opened (REPEATABLE READ, READ ONLY) on its own connection and
 *      waits, before its first query, for a snapshot to adopt.
 *   2. On a second connection, the sequencer's advisory lock is taken (session-level, so it is
 *      held before the next transaction's snapshot is taken), then a REPEATABLE READ transaction
 *      runs the sequencer statement. Its snapshot S is taken after the lock, so it sees every
 *      position a previous sequencer committed, and no other sequencer runs while it holds the
 *      lock. Every event committed in S gets a position; P is the head in S.
 *   3. S is exported (pg_export_snapshot) and the reading transaction adopts it
 *      (SET TRANSACTION SNAPSHOT): it sees exactly the commits S sees.
 *   4. The positioning transaction commits and the lock is released: positions 1..P are now
 *      readable, and every event S did not see commits later, is positioned by a later
 *      sequencer, after this lock, above P.
 * In S, the events are exactly those with positions <= P, and the data is exactly their
 * changes. The reading transaction then streams in keyset batches of ids, so memory stays
 * bounded whatever the fleet's size, while the sequencer runs on (the lock is held only for
 * steps 2-4, milliseconds).
 */
import { Readable } from "node:stream";
import {
  ServiceUnavailable,
  TooManyRequests,
  type InventorySnapshotLine,
  type InventorySnapshotQuery,
} from "@fm/domain";
import type { Principal } from "../../lib/context.ts";
import type pg from "pg";
import type { PrismaClient } from "../../db/client.ts";
import { deviceRoleRows } from "../device-roles/public.ts";
import { toDeviceRole } from "../device-roles/public.ts";
import { deviceRows } from "../devices/public.ts";
import { toDevice } from "../devices/public.ts";
import { siteRows } from "../sites/public.ts";
import { toSite } from "../sites/public.ts";
import type { FeedRepo } from "./repo.ts";
import { siteIdsOf } from "./service.ts";

export const SNAPSHOTS_BUSY = "snapshots_busy";
export const SNAPSHOT_ALREADY_STREAMING = "snapshot_already_streaming";

/** Devices read per statement: large enough to stream quickly, small enough to hold. */
const DEVICE_BATCH = 500;

export interface SnapshotDeps {
  prisma: PrismaClient;
  pool: pg.Pool | undefined;
  repo: FeedRepo;
  staleAfterMs: number;
  siteSilenceAfterMs: number;
  /** Longest a snapshot's transaction may stay open, milliseconds. */
  timeoutMs: number;
  /**
   * Snapshots streaming at once. Each holds a pooled connection for as long as its reader
   * reads (and one more for a moment at its start), so an unbounded number of slow readers
   * could take every connection the API needs; past this, a snapshot is a 503 to retry.
   */
  maxConcurrent: number;
  /**
   * Slots kept for machine clients (the connectors, which must resnapshot after a 410): people
   * share the others, so readers with company accounts can never take every slot. 1 by default.
   */
  reservedForMachines?: number;
  /** How long a reader may take nothing before its snapshot is cut short, milliseconds. */
  stallMs: number;
  now?: () => Date;
}

/** A stream the route sends: NDJSON lines, written as the client reads them (backpressure). */
export function createSnapshotService(deps: SnapshotDeps) {
  const now = deps.now ?? (() => new Date());
  let streaming = 0;
  let peopleStreaming = 0;
  /** Snapshots streaming per principal id: one each (a reader has no use for two at once). */
  const byPrincipal = new Set<string>();
  const peopleMax = Math.max(0, deps.maxConcurrent - (deps.reservedForMachines ?? 1));
  return {
    /**
     * Resolves once the snapshot's position is fixed (so a failure before that is a problem
     * response), with the stream of its lines. A failure while streaming cuts the stream
     * short: without its `end` line, readers know it is incomplete.
     */
    async open(query: InventorySnapshotQuery, who: Pick<Principal, "id" | "kind">): Promise<Readable> {
      const { pool } = deps;
      if (!pool) throw new Error("the inventory snapshot needs the hub's connection pool");
      const wanted = query.site;
      let siteIds: string[] | undefined;
      if (wanted.length) siteIds = await siteIdsOf(deps.prisma, wanted);
      const person = who.kind === "person";
      if (streaming >= deps.maxConcurrent || (person && peopleStreaming >= peopleMax))
        throw new ServiceUnavailable(
          SNAPSHOTS_BUSY,
          person
            ? `the ${peopleMax} inventory snapshot slot(s) people share on this hub are streaming (the others are kept for machine clients); retry shortly`
            : `${deps.maxConcurrent} inventory snapshot(s) are already streaming from this hub; retry shortly`,
        );
      if (byPrincipal.has(who.id))
        throw new TooManyRequests(
          SNAPSHOT_ALREADY_STREAMING,
          "This caller's inventory snapshot is still streaming from this hub: read it to its end (or close it) before opening another",
        );
      // `wake` resumes the writer when the reader wants more, or has gone away.
      let wake = () => {};
      const out = new Readable({ read: () => wake() });
      out.once("close", () => wake());
      // A failure is told once: before the first line as the route's problem response (`ready`
      // rejects), after it by the stream ending without its `end` line. Destroying the stream
      // with the error must not also be an unhandled 'error' event that ends the process.
      out.on("error", () => {});
      let started!: () => void;
      let failed!: (err: Error) => void;
      const ready = new Promise<void>((resolve, reject) => {
        started = resolve;
        failed = reject;
      });
      const write = async (line: InventorySnapshotLine): Promise<void> => {
        if (out.destroyed) throw new Error("the reader went away");
        if (out.push(JSON.stringify(line) + "\n")) return;
        // The reader has all it can hold: wait for it to take more, but not for ever. A reader
        // that stops reading would keep its transaction, connection and slot to the timeout.
        let stalled: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve, reject) => {
          wake = resolve;
          stalled = setTimeout(() => reject(new Error("the reader stopped reading")), deps.stallMs);
        }).finally(() => clearTimeout(stalled));
      };
      streaming++;
      if (person) peopleStreaming++;
      byPrincipal.add(who.id);
      const reading = deps.repo.inSnapshot(
        pool,
        deps.prisma,
        async (tx, position) => {
          // One statement at a time: the transaction has one connection.
          const sites = await siteRows.allWithPushes(tx, siteIds);
          const takenAt = now();
          started();
          await write({
            kind: "snapshot",
            position: position.toString(),
            takenAt: takenAt.toISOString(),
            sites: sites.map((s) => s.slug),
          });
          let count = 0;
          for (const s of sites) {
            await write({ kind: "site", data: toSite(s, takenAt, deps.siteSilenceAfterMs) });
            count++;
          }
          for (const role of await deviceRoleRows.allRolesCounted(tx)) {
            await write({ kind: "deviceRole", data: toDeviceRole(role) });
            count++;
          }
          for (let after: string | undefined; ;) {
            const ids = await deps.repo.deviceIdsAfter(tx, siteIds, after, DEVICE_BATCH);
            if (!ids.length) break;
            for (const row of await deviceRows.findByIds(tx, ids)) {
              await write({ kind: "device", data: toDevice(row, takenAt, deps.staleAfterMs) });
              count++;
            }
            after = ids[ids.length - 1];
          }
          await write({ kind: "end", count });
        },
        deps.timeoutMs,
      );
      reading
        .then(
          () => out.push(null),
          (err: Error) => {
            failed(err);
            out.destroy(err);
          },
        )
        .finally(() => {
          streaming--;
          if (person) peopleStreaming--;
          byPrincipal.delete(who.id);
        });
      await ready;
      return out;
    },
  };
}
export type SnapshotService = ReturnType<typeof createSnapshotService>;
