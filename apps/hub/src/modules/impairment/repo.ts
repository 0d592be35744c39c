/** What impairment reads of a site's devices, and the site's hold. */
import type { Db, Prisma } from "../../db/client.ts";

const IMPAIRMENT_SELECT = {
  id: true,
  name: true,
  healthStatus: true,
  healthSince: true,
  healthConditions: true,
  cordoned: true,
  cordonSource: true,
} as const satisfies Prisma.DeviceSelect;
export type ImpairmentRow = Prisma.DeviceGetPayload<{ select: typeof IMPAIRMENT_SELECT }>;

export const impairmentRepo = {
  async devices(db: Db, siteId: string): Promise<ImpairmentRow[]> {
    return db.device.findMany({ where: { siteId }, select: IMPAIRMENT_SELECT });
  },

  async site(db: Db, siteId: string) {
    return db.site.findUniqueOrThrow({ where: { id: siteId } });
  },

  /** Sets or clears the site's hold; the site's version moves with it (its ETag changes). */
  async setHold(db: Db, siteId: string, hold: { since: Date; message: string } | null) {
    return db.site.update({
      where: { id: siteId },
      data: {
        impairmentHeldSince: hold?.since ?? null,
        impairmentHoldMessage: hold?.message ?? null,
        version: { increment: 1 },
        updatedAt: new Date(),
      },
    });
  },
};
export type ImpairmentRepo = typeof impairmentRepo;
