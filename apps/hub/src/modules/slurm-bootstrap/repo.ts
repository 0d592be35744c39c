import { Conflict, type SlurmBootstrapConfigCreate } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { translateConstraintErrors } from "../../db/constraint-errors.ts";
import { lockRow } from "../../db/lock.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";

export type SlurmBootstrapConfigRow = Prisma.SlurmBootstrapConfigGetPayload<object>;

/** The fields PUT replaces (the device role is the config's identity and stays). */
export interface SlurmBootstrapConfigFields {
  image: string;
  flavor: string;
  gres: string | null;
  userData: string | null;
}

export const slurmBootstrapRepo = {
  async list(db: Db, siteId: string, page: PageRequest): Promise<RowPage<SlurmBootstrapConfigRow>> {
    return keysetRows(db.slurmBootstrapConfig, { siteId }, page);
  },

  async findAtSite(db: Db, siteId: string, id: string): Promise<SlurmBootstrapConfigRow | null> {
    return db.slurmBootstrapConfig.findFirst({ where: { id, siteId } });
  },

  /** Reads the site's config and locks it for the rest of the transaction. */
  async lockAtSite(db: Db, siteId: string, id: string): Promise<SlurmBootstrapConfigRow | null> {
    const locked = await lockRow(db, "slurm_bootstrap_configs", id, siteId);
    return locked ? db.slurmBootstrapConfig.findUnique({ where: { id } }) : null;
  },

  async create(db: Db, siteId: string, data: SlurmBootstrapConfigCreate): Promise<SlurmBootstrapConfigRow> {
    return db.slurmBootstrapConfig.create({ data: { ...data, siteId } }).catch(
      translateConstraintErrors({
        unique: new Conflict(
          "slurm_bootstrap_config_exists",
          "This site already has a SLURM bootstrap config for that device role; change it with PUT",
        ),
      }),
    );
  },

  async replace(db: Db, id: string, fields: SlurmBootstrapConfigFields): Promise<SlurmBootstrapConfigRow> {
    return db.slurmBootstrapConfig.update({
      where: { id },
      data: { ...fields, version: { increment: 1 }, updatedAt: new Date() },
    });
  },

  async delete(db: Db, id: string): Promise<void> {
    await db.slurmBootstrapConfig.delete({ where: { id } });
  },
};
export type SlurmBootstrapRepo = typeof slurmBootstrapRepo;
