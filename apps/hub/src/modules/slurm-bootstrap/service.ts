import { keysetPage } from "../../lib/paging.ts";
import { createHash } from "node:crypto";
import { Conflict, NotFound, Unprocessable, decodeCursor } from "@fm/domain";
import type { SlurmBootstrapConfig, SlurmBootstrapConfigCreate, SlurmBootstrapConfigReplace } from "@fm/domain";
import type { PrismaClient, Db } from "../../db/client.ts";
import { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { checkIfMatch } from "../../lib/etag.ts";
import { requireSite } from "../sites/repo.ts";

type Row = Prisma.SlurmBootstrapConfigGetPayload<object>;
const present = (r: Row): SlurmBootstrapConfig => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});
const notFound = (id: string) =>
  new NotFound("slurm_bootstrap_config_not_found", `No SLURM bootstrap config with id ${id} at this site`);

async function requireRole(db: Db, roleId: string): Promise<void> {
  if (!(await db.deviceRole.findUnique({ where: { id: roleId }, select: { id: true } }))) {
    throw new Unprocessable("unknown_device_role", `No device role with id ${roleId}`, {
      errors: [{ path: "body.deviceRoleId", message: "unknown device role" }],
    });
  }
}
const duplicate = (err: unknown): never => {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
    throw new Conflict(
      "slurm_bootstrap_config_exists",
      "This site already has a SLURM bootstrap config for that device role; change it with PUT",
    );
  }
  throw err;
};

/** SLURM bootstrap configs: one row per (site, device role), as the rollout guide prescribes. */
export function createSlurmBootstrapService({ prisma }: { prisma: PrismaClient }) {
  async function locked(tx: Db, siteId: string, id: string): Promise<Row> {
    const rows = await tx.$queryRaw<
      { id: string }[]
    >`SELECT id FROM slurm_bootstrap_configs WHERE id = ${id}::uuid AND site_id = ${siteId}::uuid FOR UPDATE`;
    if (!rows.length) throw notFound(id);
    return (await tx.slurmBootstrapConfig.findUnique({ where: { id } }))!;
  }
  return {
    async list(siteId: string, q: { limit: number; cursor?: string | undefined }) {
      await requireSite(prisma, siteId);
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.slurmBootstrapConfig.findMany({
          where: { siteId, ...(afterId ? { id: { gt: afterId } } : {}) },
          orderBy: { id: "asc" },
          take: q.limit + 1,
        }),
        prisma.slurmBootstrapConfig.count({ where: { siteId } }),
      ]);
      return keysetPage(rows, count, q.limit, present);
    },
    async get(siteId: string, id: string) {
      const row = await prisma.slurmBootstrapConfig.findFirst({ where: { id, siteId } });
      if (!row) throw notFound(id);
      return present(row);
    },
    async create(ctx: RequestContext, siteId: string, input: SlurmBootstrapConfigCreate) {
      const row = await prisma.$transaction(async (tx) => {
        await requireSite(tx, siteId);
        await requireRole(tx, input.deviceRoleId);
        const created = await tx.slurmBootstrapConfig.create({ data: { ...input, siteId } }).catch(duplicate);
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: created.id,
          siteId,
          verb: "created",
          before: null,
          after: redact(present(created)),
        });
        return created;
      });
      return present(row);
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
        const updated = await tx.slurmBootstrapConfig.update({
          where: { id },
          data: {
            image: input.image,
            flavor: input.flavor,
            gres: input.gres ?? null,
            userData: input.userData ?? null,
            version: { increment: 1 },
            updatedAt: new Date(),
          },
        });
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: id,
          siteId,
          verb: "updated",
          before: redact(present(current)),
          after: redact(present(updated)),
        });
        return updated;
      });
      return present(row);
    },
    async remove(ctx: RequestContext, siteId: string, id: string, ifMatch: string | undefined) {
      await prisma.$transaction(async (tx) => {
        const current = await locked(tx, siteId, id);
        checkIfMatch(ifMatch, current);
        await tx.slurmBootstrapConfig.delete({ where: { id } });
        await recordChange(tx, ctx, {
          resourceType: "slurm_bootstrap_config",
          resourceId: id,
          siteId,
          verb: "deleted",
          before: redact(present(current)),
          after: null,
        });
      });
    },
  };
}
export type SlurmBootstrapService = ReturnType<typeof createSlurmBootstrapService>;

/** user-data can carry credentials: audit and feed record a digest of it, not the text. */
function redact(c: SlurmBootstrapConfig): Record<string, unknown> {
  if (!c.userData) return { ...c };
  return { ...c, userData: `sha256:${createHash("sha256").update(c.userData).digest("hex")}` };
}
