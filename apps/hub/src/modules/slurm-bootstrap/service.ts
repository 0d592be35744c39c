import { createHash } from "node:crypto";
import { NotFound, Unprocessable } from "@fm/domain";
import type {
  SlurmBootstrapConfig,
  SlurmBootstrapConfigCreate,
  SlurmBootstrapConfigList,
  SlurmBootstrapConfigReplace,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import { checkIfMatch } from "../../lib/etag.ts";
import { keysetList, type PageQuery } from "../../lib/paging.ts";
import { recordChange } from "../../changes/recorder.ts";
import { deviceRoleRows } from "../device-roles/public.ts";
import { requireSite } from "../sites/public.ts";
import type { SlurmBootstrapConfigRow, SlurmBootstrapRepo } from "./repo.ts";

export const toSlurmBootstrapConfig = (r: SlurmBootstrapConfigRow): SlurmBootstrapConfig => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

/** user-data can carry credentials: audit and feed record a digest of it, not the text. */
function redact(c: SlurmBootstrapConfig): SlurmBootstrapConfig {
  if (!c.userData) return { ...c };
  return { ...c, userData: `sha256:${createHash("sha256").update(c.userData).digest("hex")}` };
}

const notFound = (id: string) =>
  new NotFound("slurm_bootstrap_config_not_found", `No SLURM bootstrap config with id ${id} at this site`);

async function requireRole(db: Db, roleId: string): Promise<void> {
  if (!(await deviceRoleRows.roleExists(db, roleId))) {
    throw new Unprocessable("unknown_device_role", `No device role with id ${roleId}`, {
      errors: [{ path: "body.deviceRoleId", message: "unknown device role" }],
    });
  }
}

/** SLURM bootstrap configs: one row per (site, device role), as the rollout guide prescribes. */
export function createSlurmBootstrapService({ prisma, repo }: { prisma: PrismaClient; repo: SlurmBootstrapRepo }) {
  async function locked(tx: Db, siteId: string, id: string): Promise<SlurmBootstrapConfigRow> {
    const row = await repo.lockAtSite(tx, siteId, id);
    if (!row) throw notFound(id);
    return row;
  }
  return {
    async list(siteId: string, query: PageQuery): Promise<SlurmBootstrapConfigList> {
      await requireSite(prisma, siteId);
      return keysetList(query, (page) => repo.list(prisma, siteId, page), toSlurmBootstrapConfig);
    },
    async get(siteId: string, id: string): Promise<SlurmBootstrapConfig> {
      const row = await repo.findAtSite(prisma, siteId, id);
      if (!row) throw notFound(id);
      return toSlurmBootstrapConfig(row);
    },
    async create(ctx: RequestContext, siteId: string, input: SlurmBootstrapConfigCreate) {
      const row = await prisma.$transaction(async (tx) => {
        await requireSite(tx, siteId);
        await requireRole(tx, input.deviceRoleId);
        const created = await repo.create(tx, siteId, input);
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: created.id,
          siteId,
          verb: "created",
          before: null,
          after: redact(toSlurmBootstrapConfig(created)),
        });
        return created;
      });
      return toSlurmBootstrapConfig(row);
    },
    async replace(
      ctx: RequestContext,
      siteId: string,
      id: string,
      input: SlurmBootstrapConfigReplace,
      ifMatch: string | undefined,
    ) {
      const row = await prisma.$transaction(async (tx) => {
        const current = await locked(tx, siteId, id);
        checkIfMatch(ifMatch, current);
        if (input.deviceRoleId && input.deviceRoleId !== current.deviceRoleId) {
          throw new Unprocessable(
            "device_role_immutable",
            "A config's device role cannot change; delete it and create one for the other role",
            { errors: [{ path: "body.deviceRoleId", message: "cannot change" }] },
          );
        }
        const updated = await repo.replace(tx, id, {
          image: input.image,
          flavor: input.flavor,
          gres: input.gres ?? null,
          userData: input.userData ?? null,
        });
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: id,
          siteId,
          verb: "updated",
          before: redact(toSlurmBootstrapConfig(current)),
          after: redact(toSlurmBootstrapConfig(updated)),
        });
        return updated;
      });
      return toSlurmBootstrapConfig(row);
    },
    async remove(ctx: RequestContext, siteId: string, id: string, ifMatch: string | undefined) {
      await prisma.$transaction(async (tx) => {
        const current = await locked(tx, siteId, id);
        checkIfMatch(ifMatch, current);
        await repo.delete(tx, id);
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: id,
          siteId,
          verb: "deleted",
          before: redact(toSlurmBootstrapConfig(current)),
          after: null,
        });
      });
    },
  };
}
export type SlurmBootstrapService = ReturnType<typeof createSlurmBootstrapService>;
