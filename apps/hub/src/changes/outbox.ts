/**
 * The two append-only tables every change is written to, inside the change's own transaction:
 * the audit log and the inventory feed's outbox (`inventory_events`). Only the recorder
 * (./recorder.ts) and the demo seed append; the audit module reads the log, the feed module
 * positions, pages and purges the events (modules/feed/repo.ts explains the sequencer).
 */
import type { FieldDiff, InventoryEvent } from "@fm/domain";
import { bulkInsert } from "../db/bulk.ts";
import type { Db } from "../db/client.ts";

export interface NewAuditEntry {
  principal: string;
  action: string;
  resourceType: string;
  resourceId: string;
  diff: FieldDiff;
  requestId: string | null;
}

/** An event to append: its data is exactly its type's (packages/domain feed.ts). */
export type NewInventoryEvent = InventoryEvent extends infer E
  ? E extends InventoryEvent
    ? Omit<E, "position" | "occurredAt">
    : never
  : never;

export const outbox = {
  /** Appends audit entries inside the caller's transaction, one statement however many (as the events). */
  async appendAudit(db: Db, entries: NewAuditEntry[]): Promise<void> {
    await bulkInsert(
      db,
      "audit_log",
      [
        { name: "principal", type: "varchar" },
        { name: "action", type: "varchar" },
        { name: "resource_type", type: "varchar" },
        { name: "resource_id", type: "varchar" },
        { name: "diff", type: "json" },
        { name: "request_id", type: "varchar" },
      ],
      entries.map((e) => ({
        principal: e.principal,
        action: e.action,
        resource_type: e.resourceType,
        resource_id: e.resourceId,
        diff: e.diff,
        request_id: e.requestId,
      })),
    );
  },

  /** Appends events inside the caller's transaction: they commit, or vanish, with the change. */
  async appendEvents(db: Db, events: NewInventoryEvent[]): Promise<void> {
    await bulkInsert(
      db,
      "inventory_events",
      [
        { name: "type", type: "varchar" },
        { name: "resource_type", type: "varchar" },
        { name: "resource_id", type: "varchar" },
        { name: "site_id", type: "uuid" },
        { name: "data", type: "json" },
        { name: "request_id", type: "varchar" },
      ],
      events.map((e) => ({
        type: e.type,
        resource_type: e.resourceType,
        resource_id: e.resourceId,
        site_id: e.siteId,
        data: e.data,
        request_id: e.requestId,
      })),
    );
  },
};
