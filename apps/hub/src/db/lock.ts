import type { Db } from "./client.ts";

/** Tables whose rows a write locks before reading them (read, check If-Match or the state machine, write). */
export type LockableTable = "sites" | "devices" | "jobs" | "slurm_bootstrap_configs";

/**
 * Locks the row with this id (and, for rows of a site, that site) until the transaction ends;
 * false when there is no such row. The caller then reads it knowing no one else writes it.
 */
export async function lockRow(db: Db, table: LockableTable, id: string, siteId?: string): Promise<boolean> {
  const rows =
    siteId === undefined
      ? await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${table} WHERE id = $1::uuid FOR UPDATE`, id)
      : await db.$queryRawUnsafe<unknown[]>(
          `SELECT 1 FROM ${table} WHERE id = $1::uuid AND site_id = $2::uuid FOR UPDATE`,
          id,
          siteId,
        );
  return rows.length > 0;
}
