/**
 * The device list's order as Prisma arguments: ORDER BY (field, id) in one direction, and the
 * rows after a cursor's (value, id) in that order. The bound is written `field >= v AND (field
 * > v OR id > last)` rather than only the OR, so PostgreSQL starts its scan of the (field, id)
 * index at the cursor instead of filtering its way there from the first row. Nulls (serial) are
 * where PostgreSQL puts them by default, so the plain index serves both directions: after every
 * value ascending, before every value descending.
 */
import {
  BadRequest,
  OPERATIONAL_STATUSES,
  decodeListCursor,
  encodeListCursor,
  filterFingerprint,
  parseDeviceSort,
  type DeviceListQuery,
  type DeviceSort,
  type DeviceSortField,
} from "@fm/domain";
import type { Prisma } from "../../generated/prisma/client.ts";
import type { RowPage } from "../../db/keyset.ts";
import type { List } from "../../lib/paging.ts";
import type { DevicePage } from "./repo.ts";

type SortRow = { id: string; name: string; serial?: string | null; operationalStatus: string; updatedAt?: Date };

/**
 * One page of the device list in the query's order: decodes the cursor against the query's
 * sort and filters, fetches the rows after it (the repo; in the Prisma condition `after`, or
 * after the id `afterId` in id order), and issues the next page's cursor
 * from the last row's id and sort value.
 */
export async function deviceListPage<R extends SortRow, T>(
  query: DeviceListQuery,
  fetch: (page: DevicePage & { afterId: string | undefined; skip: number }) => Promise<RowPage<R>>,
  toItem: (row: R) => T,
): Promise<List<T>> {
  const { limit, cursor, sort, page: pageNumber, brief: _brief, ...filters } = query;
  if (cursor && pageNumber)
    throw new BadRequest("validation_failed", "Give cursor or page, not both", {
      errors: [{ path: "page", message: "not with cursor" }],
    });
  const order = deviceOrder(sort);
  const shape = { sort: sort ?? "id", filters: filterFingerprint(filters) };
  let after: Prisma.DeviceWhereInput | undefined;
  let afterId: string | undefined;
  if (cursor) {
    const pos = decodeListCursor(cursor, shape);
    afterId = pos.after;
    if (!sortValueValid(order.field, pos.value))
      throw new BadRequest("invalid_cursor", "The cursor is not one this API issued", {
        errors: [{ path: "cursor", message: "invalid cursor" }],
      });
    after = afterWhere(order, pos.after, pos.value);
  }
  const skip = pageNumber ? (pageNumber - 1) * limit : 0;
  const { rows, count } = await fetch({ after, afterId, orderBy: orderByOf(order), limit, skip });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  const nextCursor =
    more && last
      ? encodeListCursor(
          { after: last.id, ...(order.field === "id" ? {} : { value: sortValueOf(last, order.field) }) },
          shape,
        )
      : null;
  return { items: page.map(toItem), count, nextCursor };
}

export interface DeviceOrder {
  field: DeviceSortField | "id";
  desc: boolean;
}

export function deviceOrder(sort: DeviceSort | undefined): DeviceOrder {
  return sort ? parseDeviceSort(sort) : { field: "id", desc: false };
}

export function orderByOf(o: DeviceOrder): Prisma.DeviceOrderByWithRelationInput[] {
  const dir = o.desc ? "desc" : "asc";
  return o.field === "id" ? [{ id: dir }] : [{ [o.field]: dir }, { id: dir }];
}

/** The last row's sort value as the cursor carries it (text; RFC 3339 for a time). */
export function sortValueOf(
  row: { name: string; serial?: string | null; operationalStatus: string; updatedAt?: Date },
  field: DeviceSortField,
): string | null {
  switch (field) {
    case "name":
      return row.name;
    case "serial":
      return row.serial ?? null;
    case "operationalStatus":
      return row.operationalStatus;
    case "updatedAt":
      return row.updatedAt!.toISOString();
  }
}

/** Rows after (value, id) in the order `o`; value is the cursor's (validated here: it is client text). */
export function afterWhere(o: DeviceOrder, afterId: string, value: string | null | undefined): Prisma.DeviceWhereInput {
  const idBeyond = { id: o.desc ? { lt: afterId } : { gt: afterId } };
  if (o.field === "id") return idBeyond;
  if (o.field === "operationalStatus") return statusAfter(o.desc, String(value), idBeyond);
  if (o.field === "serial" && value === null)
    // Ascending the nulls come last: only nulls follow. Descending they come first: the rest
    // of the nulls, then every value.
    return o.desc ? { OR: [{ serial: null, ...idBeyond }, { serial: { not: null } }] } : { serial: null, ...idBeyond };
  if (value === null || value === undefined) throw new Error("unreachable: the cursor decoder checked the value");
  const v: string | Date = o.field === "updatedAt" ? new Date(value) : value;
  const [strictly, orEqual] = o.desc ? (["lt", "lte"] as const) : (["gt", "gte"] as const);
  const bounded: Prisma.DeviceWhereInput = {
    AND: [{ [o.field]: { [orEqual]: v } }, { OR: [{ [o.field]: { [strictly]: v } }, idBeyond] }],
  };
  // Ascending, the nulls of a nullable field follow every value.
  return o.field === "serial" && !o.desc ? { OR: [bounded, { serial: null }] } : bounded;
}

/**
 * The enum has no < in Prisma's filters: the statuses after `value` in the enum's order (which
 * is PostgreSQL's order of the type, the order of the CREATE TYPE), or the same status further on.
 */
function statusAfter(desc: boolean, value: string, idBeyond: Prisma.DeviceWhereInput): Prisma.DeviceWhereInput {
  const i = OPERATIONAL_STATUSES.indexOf(value as (typeof OPERATIONAL_STATUSES)[number]);
  const later = desc ? OPERATIONAL_STATUSES.slice(0, Math.max(i, 0)) : OPERATIONAL_STATUSES.slice(i + 1);
  const same = OPERATIONAL_STATUSES[i]!;
  return { OR: [{ operationalStatus: { in: [...later] } }, { operationalStatus: same, ...idBeyond }] };
}

/** A cursor's value that is not of the field's type is the client's mistake: a 400, never a 500. */
export function sortValueValid(field: DeviceSortField | "id", value: string | null | undefined): boolean {
  switch (field) {
    case "id":
      return true;
    case "serial":
      return value === null || storable(value);
    case "name":
      return storable(value);
    case "operationalStatus":
      return OPERATIONAL_STATUSES.includes(value as (typeof OPERATIONAL_STATUSES)[number]);
    case "updatedAt":
      // A year PostgreSQL and JavaScript both hold (the timestamps the hub writes are such).
      return typeof value === "string" && /^\d{4}-/.test(value) && !Number.isNaN(Date.parse(value)) && value >= "0001";
  }
}

/** Text PostgreSQL can compare: a string of at most a column's length, without NUL. */
function storable(value: unknown): value is string {
  return typeof value === "string" && value.length <= 200 && !value.includes("\u0000");
}
