/**
 * Recording a change: every mutating service calls this inside its transaction, so the audit
 * record and the feed event commit together with the change, or not at all. A change of a
 * resource the feed carries is typed by the feed's schemas (packages/domain feed.ts): its
 * before/after must be exactly that event type's data.
 */
import { diffFields, type InventoryEventData, type InventoryEventType } from "@fm/domain";
import type { Db } from "../db/client.ts";
import type { ChangeContext } from "../lib/context.ts";
import { outbox, type NewInventoryEvent } from "./outbox.ts";

export type ChangeVerb = "created" | "updated" | "deleted";

interface ChangeBase {
  resourceId: string;
  siteId: string | null;
  /** Audit action name when it is not `<resource>.<create|update|delete>`. */
  action?: string;
}

/** A change the feed carries: before and after are the event's data (null for created / deleted). */
type FeedChangeOf<T extends InventoryEventType> = T extends `${infer R}.${infer V}`
  ? ChangeBase & {
      resourceType: R;
      verb: V;
      before: V extends "created" ? null : InventoryEventData<T>;
      after: V extends "deleted" ? null : InventoryEventData<T>;
      feed?: true;
    }
  : never;
export type FeedChange = { [T in InventoryEventType]: FeedChangeOf<T> }[InventoryEventType];

/** A change of a resource only the audit log records (API representations or a summary of what changed). */
export interface AuditOnlyChange extends ChangeBase {
  resourceType: "topology_sync_request" | "satellite" | "oauth_client" | "device_burn_in_override";
  verb: ChangeVerb;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  feed: false;
}

export type Change = FeedChange | AuditOnlyChange;

const ACTION_VERB: Record<ChangeVerb, string> = { created: "create", updated: "update", deleted: "delete" };

/** The feed event of a change; its type and data agree because FeedChange ties them together. */
const eventOf = (change: FeedChange, requestId: string): NewInventoryEvent =>
  ({
    type: `${change.resourceType}.${change.verb}`,
    resourceType: change.resourceType,
    resourceId: change.resourceId,
    siteId: change.siteId,
    data: change.after ?? change.before,
    requestId,
  }) as NewInventoryEvent;

export async function recordChange(db: Db, ctx: ChangeContext, change: Change): Promise<void> {
  await recordChanges(db, ctx, [change]);
}

/** Many changes of one request in two statements (audit, feed): reflections change thousands. */
export async function recordChanges(db: Db, ctx: ChangeContext, changes: Change[]): Promise<void> {
  if (!changes.length) return;
  const audit = changes.map((change) => ({
    principal: ctx.principal.id,
    action: change.action ?? `${change.resourceType}.${ACTION_VERB[change.verb]}`,
    resourceType: change.resourceType,
    resourceId: change.resourceId,
    diff: diffFields(change.before, change.after),
    requestId: ctx.requestId,
  }));
  await outbox.appendAudit(db, audit);
  await outbox.appendEvents(
    db,
    changes.filter((c): c is FeedChange => c.feed !== false).map((change) => eventOf(change, ctx.requestId)),
  );
}
