/**
 * Recording a change: every mutating service calls this inside its transaction, so the audit
 * record and the feed event commit together with the change, or not at all.
 */
import { diffFields } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import { auditRepo } from "../audit/repo.ts";
import { feedRepo } from "../feed/repo.ts";
import type { RequestContext } from "../../lib/context.ts";

export type ChangeVerb = "created" | "updated" | "deleted";
/** Resource types with feed events; audit-only resources are recorded with `feed: false`. */
export type ResourceType =
  | "site"
  | "device_role"
  | "device"
  | "job"
  | "slurm_bootstrap_config"
  | "topology_sync_request"
  | "satellite"
  | "oauth_client";

export interface Change {
  resourceType: ResourceType;
  resourceId: string;
  siteId: string | null;
  verb: ChangeVerb;
  /** API representations before and after (null for created / deleted). */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** Audit action name when it is not `<resource>.<create|update|delete>`. */
  action?: string;
  feed?: boolean;
}

const ACTION_VERB: Record<ChangeVerb, string> = { created: "create", updated: "update", deleted: "delete" };

export async function recordChange(
  db: Db,
  ctx: Pick<RequestContext, "principal" | "requestId">,
  change: Change,
): Promise<void> {
  await recordChanges(db, ctx, [change]);
}

/** Many changes of one request in two statements (audit, feed): reflections change thousands. */
export async function recordChanges(
  db: Db,
  ctx: Pick<RequestContext, "principal" | "requestId">,
  changes: Change[],
): Promise<void> {
  if (!changes.length) return;
  const audit = changes.map((change) => ({
    principal: ctx.principal.id,
    action: change.action ?? `${change.resourceType}.${ACTION_VERB[change.verb]}`,
    resourceType: change.resourceType,
    resourceId: change.resourceId,
    diff: diffFields(change.before, change.after),
    requestId: ctx.requestId,
  }));
  if (audit.length === 1) await auditRepo.append(db, audit[0]!);
  else await auditRepo.appendMany(db, audit);
  await feedRepo.append(
    db,
    changes
      .filter((c) => c.feed !== false)
      .map((change) => ({
        type: `${change.resourceType}.${change.verb}`,
        resourceType: change.resourceType,
        resourceId: change.resourceId,
        siteId: change.siteId,
        data: (change.after ?? change.before)!,
        requestId: ctx.requestId,
      })),
  );
}
