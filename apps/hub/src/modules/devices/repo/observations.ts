/**
 * When each source last listed a device (device_observations, see db/device-columns.ts): the
 * join that reads the times with the row, the split of a write between the two tables, and the
 * stamps a push writes for thousands of devices in one statement.
 */
import { directQuery, type Db } from "../../../db/client.ts";
import { snakeCase } from "../../../db/bulk.ts";
import { OBSERVED_FIELDS, isObservedField, type Observed, type ObservedField } from "../../../db/device-columns.ts";

export const OBSERVED_SQL = OBSERVED_FIELDS.map((f) => `o.${snakeCase(f)} AS "${f}"`).join(", ");
/** SQL: the join that brings a device's observation times (as `o`) next to its row (`d`). */
export const OBSERVED_JOIN = "LEFT JOIN device_observations o ON o.device_id = d.id";
/** The observation times of a read that included them, as fields of the row. */
export function withObservations<R extends { observations: Partial<Observed> | null }>({
  observations,
  ...row
}: R): Omit<R, "observations"> & Observed {
  return {
    ...row,
    netboxObservedAt: observations?.netboxObservedAt ?? null,
    ironicObservedAt: observations?.ironicObservedAt ?? null,
    slurmObservedAt: observations?.slurmObservedAt ?? null,
    healthObservedAt: observations?.healthObservedAt ?? null,
  };
}
/** A write's fields split between the device row and its observation times. */
export function splitObserved<T extends object>(data: T): { row: Omit<T, ObservedField>; observed: Partial<Observed> } {
  const row: Record<string, unknown> = {};
  const observed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) (isObservedField(k) ? observed : row)[k] = v;
  return { row: row as Omit<T, ObservedField>, observed: observed };
}

export const observationStamps = {
  /**
   * Locks the devices (in id order, as lockByIds) and answers those observed through `field`
   * after `at`. Only a job's report stamps a device later than a push accepted afterwards (the
   * hub refuses pushes older than the site's last one): a workflow that activated a device in
   * NetBox, or made its Ironic node, after the agent read its source. Such a push must not undo
   * what the job recorded; the agent's next push, observed after, brings the source's word.
   */
  async lockObservedAfter(db: Db, field: ObservedField, ids: string[], at: Date): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const column = snakeCase(field);
    const rows = await db.$queryRawUnsafe<{ id: string; newer: boolean | null }[]>(
      `SELECT d.id, o.${column} > $2 AS newer FROM devices d ${OBSERVED_JOIN}
        WHERE d.id = ANY($1::uuid[]) ORDER BY d.id FOR NO KEY UPDATE OF d`,
      ids,
      at,
    );
    return new Set(rows.filter((r) => r.newer).map((r) => r.id));
  },
  /**
   * A source listed these devices at `at`: one statement, whatever their number, on the narrow
   * device_observations rows. Rows already stamped at that time or later are left alone: never
   * backwards (a job that observed a device after this push keeps its later stamp), and never a
   * second version of a row in one transaction.
   */
  async markObserved(db: Db, field: ObservedField, ids: string[], at: Date): Promise<void> {
    const column = snakeCase(field);
    if (ids.length)
      await directQuery(
        db,
        `UPDATE device_observations SET ${column} = $2
          WHERE device_id = ANY($1::uuid[]) AND (${column} IS NULL OR ${column} < $2)`,
        ids,
        at,
      );
  },
  /**
   * Each device's observation times as given (those it has; a created device's row came with
   * it, empty): one statement per field and time, the usual case being one time for them all
   * (a time per row would be 50,000 timestamps sent on a first load).
   */
  async stampObserved(db: Db, devices: { id: string; observed: Partial<Observed> }[]): Promise<void> {
    for (const f of OBSERVED_FIELDS) {
      const byTime = new Map<number, { at: Date; ids: string[] }>();
      for (const c of devices) {
        const at = c.observed[f];
        if (!(at instanceof Date)) continue;
        let group = byTime.get(at.getTime());
        if (!group) byTime.set(at.getTime(), (group = { at, ids: [] }));
        group.ids.push(c.id);
      }
      for (const { at, ids } of byTime.values()) await observationStamps.markObserved(db, f, ids, at);
    }
  },
};
