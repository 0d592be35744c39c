/** What the server knows of each list endpoint: its rows, rendering, filters and PATCH rules. */
import type { Filter } from "./filters.ts";
import type { NetboxData } from "./store.ts";
import type { Json, View } from "./view.ts";

export interface Endpoint<T extends { id: number }> {
  path: string;
  objectType: string;
  /** The model's class name, as Django's get_object_or_404 names it. */
  objectName: string;
  rows: (data: NetboxData) => T[];
  render: (v: View, row: T) => Json;
  filters: Record<string, Filter<T>>;
  /** Model ordering, as the default for lists. */
  defaultOrdering?: string;
  patch?: (v: View, row: T, body: Record<string, unknown>) => PatchErrors;
  /** A POST to the list: validates the body and stores the new object (stamped `at`), or NetBox's 400 body. */
  create?: (v: View, body: Record<string, unknown>, at: string) => { record: T } | { errors: Record<string, string[]> };
  /** A DELETE of one object: removes it from the store (204). */
  remove?: (data: NetboxData, row: T) => void;
}

export type PatchErrors = Record<string, string[]> | undefined;

export function endpoint<T extends { id: number }>(e: Endpoint<T>): Endpoint<{ id: number }> {
  return e as unknown as Endpoint<{ id: number }>;
}

export const NOT_WRITABLE = (objectType: string, keys: string[]) => ({
  non_field_errors: [
    `netbox test server: PATCH of ${keys.map((k) => `'${k}'`).join(", ")} on ${objectType} is not implemented`,
  ],
});

export const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
