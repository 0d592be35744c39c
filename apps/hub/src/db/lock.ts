import type { Db } from "./client.ts";

/** Tables whose rows a write locks before reading them (read, check If-Match or the state machine, write). */
export type LockableTable = "sites" | "devices" | "jobs" | "slurm_bootstrap_configs";

/**
 * Locks the row with this id (and, for rows of a site, that site) until the transaction ends;
 * false when there is no such row. The caller then reads it knowing no one else writes it.
 *
 * FOR NO KEY UPDATE, not FOR UPDATE: the writes after it change no key, and the weaker lock does
 * not conflict with the FOR KEY SHARE that PostgreSQL's foreign-key checks take on the parent
 * row. With FOR UPDATE, a site's PATCH waited on every push inserting rows that name the site
 * while those pushes waited on it in turn, and PostgreSQL ended one of them as a deadlock
 * (seen under the full test run: a PATCH of a site against a reflection push, a device's cordon
 * against the discrepancy derivation inserting rows that name the device).
 */
export async function lockRow(db: Db, table: LockableTable, id: string, siteId?: string): Promise<boolean> {
  const rows =
    siteId === undefined
      ? await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${table} WHERE id = $1::uuid FOR NO KEY UPDATE`, id)
      : await db.$queryRawUnsafe<unknown[]>(
          `SELECT 1 FROM ${table} WHERE id = $1::uuid AND site_id = $2::uuid FOR NO KEY UPDATE`,
          id,
          siteId,
        );
  return rows.length > 0;
}
