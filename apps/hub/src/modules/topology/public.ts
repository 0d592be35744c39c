/** What other modules may use of topology syncs: filing one for a site inside their transaction (a job's report does). */
import type { Db } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { topologyRepo } from "./repo.ts";
import { fileTopologySync } from "./service.ts";

export const fileSiteTopologySync = (
  tx: Db,
  ctx: RequestContext,
  siteId: string,
  reason: string | null,
  requestId: string,
): ReturnType<typeof fileTopologySync> => fileTopologySync(tx, ctx, topologyRepo, siteId, reason, requestId);
