import type { Db } from "../../db/client.ts";

export const healthRepo = {
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  async ping(db: Db): Promise<void> {
    await db.$queryRaw`SELECT 1`;
  },
};
export type HealthRepo = typeof healthRepo;
