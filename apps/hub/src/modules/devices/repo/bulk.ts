/** Writes of many devices in one statement: a push's changed fields, and the planner's statistics after. */
import { bulkRows, snakeCase } from "../../../db/bulk.ts";
import { directQuery, type Db } from "../../../db/client.ts";
import { isObservedField, type DeviceBase } from "../../../db/device-columns.ts";
import { observationStamps } from "./observations.ts";

/** A device column a bulk update writes: Prisma field name and PostgreSQL type. */
export interface BulkColumn {
  field: keyof DeviceBase & string;
  type: string;
}

/**
 * Refreshes the planner's statistics of the device tables after a bulk write (a first NetBox
 * load, demo data): autovacuum gets there eventually, and until then a site-filtered page of
 * 100 sorted every row of the site (75 ms on 25,000) instead of reading 100 through the
 * (site_id, id) index (0.4 ms).
 */
export async function analyzeInventory(db: Db): Promise<void> {
  // Not device_history: it is read only through its (device_id, id) index, one device at a time,
  // whatever its statistics say, and after a first load it is the largest of them to sample.
  await db.$executeRawUnsafe("ANALYZE devices, device_observations, device_interfaces, site_device_counts");
}

export const bulkWrites = {
  /**
   * One UPDATE for many devices: each row's `values` for the given columns, plus version + 1
   * and updated_at. Values travel as one JSON document (see db/bulk.ts), so 10,000
   * devices are one statement and one round trip instead of 10,000.
   */
  async updateMany(
    db: Db,
    columns: readonly BulkColumn[],
    rows: { id: string; values: Record<string, unknown> }[],
    at: Date,
  ): Promise<number> {
    if (!rows.length) return 0;
    // The observation times go to their own rows (as markObserved writes them).
    const stamps = columns.filter((c) => isObservedField(c.field));
    const cols = [
      ...columns.filter((c) => !stamps.includes(c)),
      { field: "operationalStatus", type: "operational_status" },
      { field: "conditions", type: "jsonb" },
    ] as const;
    const sqlName = snakeCase;
    for (const c of cols)
      if (!/^[a-z][a-zA-Z]*$/.test(c.field) || !/^[a-z_]+(\[\])?$/.test(c.type))
        throw new Error(`bad bulk column ${c.field} ${c.type}`);
    const doc = rows.map((r) => ({
      id: r.id,
      ...Object.fromEntries(cols.map((c) => [sqlName(c.field), r.values[c.field] ?? null])),
    }));
    const r = await bulkRows(
      db,
      [{ name: "id", type: "uuid" }, ...cols.map((c) => ({ name: sqlName(c.field), type: c.type }))],
      doc,
      (u, param) =>
        `UPDATE devices AS d SET ${cols.map((c) => `${sqlName(c.field)} = u.${sqlName(c.field)}`).join(", ")}, version = d.version + 1, updated_at = ${param(1)}
           FROM ${u} AS u WHERE d.id = u.id`,
      at,
    );
    for (const c of stamps) {
      await observationStamps.stampObserved(
        db,
        rows.map((row) => ({ id: row.id, observed: { [c.field]: row.values[c.field] } })),
      );
      const cleared = rows.filter((row) => row.values[c.field] == null).map((row) => row.id);
      if (cleared.length)
        await directQuery(
          db,
          `UPDATE device_observations SET ${snakeCase(c.field)} = NULL
            WHERE device_id = ANY($1::uuid[]) AND ${snakeCase(c.field)} IS NOT NULL`,
          cleared,
        );
    }
    return r.count;
  },
};
