/**
 * What a connector delivers to a customer's inventory: one record shape per resource, flat
 * (a Kusto table's columns map one field each), versioned by `schemaVersion`. A field is only
 * ever added within a version; renaming or removing one is a new version, announced to the
 * customer first. Connectors, their test receivers and the operator check all read these.
 */
import { z } from "zod";
import { Timestamp, Uuid } from "./common.ts";

export const INVENTORY_RECORD_SCHEMA_VERSION = 1;

const RecordCommon = {
  schemaVersion: z.literal(INVENTORY_RECORD_SCHEMA_VERSION),
  recordId: z
    .string()
    .describe("Stable id: the same change delivered twice carries the same id, so the receiver de-duplicates on it"),
  connector: z.string().describe("The connector instance that delivered it, e.g. matrix-prod"),
  op: z.enum(["upsert", "delete"]).describe("upsert: the resource as it is now; delete: it is gone"),
  feedPosition: z.string().describe("Position of the hub feed event (or snapshot) the record comes from"),
  changedAt: Timestamp.describe("When the hub committed the change (for a snapshot: when it was taken)"),
};

export const SiteInventoryRecordSchema = z.object({
  ...RecordCommon,
  kind: z.literal("site"),
  siteId: Uuid,
  siteSlug: z.string(),
  name: z.string(),
  region: z.string().nullable(),
});

export const DeviceInventoryRecordSchema = z.object({
  ...RecordCommon,
  kind: z.literal("device"),
  deviceId: Uuid,
  siteId: Uuid,
  siteSlug: z.string(),
  name: z.string(),
  serial: z.string().nullable(),
  assetTag: z.string().nullable(),
  rack: z.string().nullable(),
  rackPosition: z.number().nullable(),
  model: z.string().nullable(),
  cpuArchitecture: z.string().nullable(),
  role: z.string().nullable(),
  deviceClass: z.string().nullable(),
  platformClass: z.string().nullable(),
  netboxStatus: z.string(),
  provisionState: z.string().nullable(),
  powerState: z.string().nullable(),
  healthStatus: z.string().nullable(),
  operationalStatus: z.string(),
  cordoned: z.boolean(),
  version: z.number().int().describe("The device's version at the hub: a receiver keeps the highest"),
});

export const InventoryRecordSchema = z.discriminatedUnion("kind", [
  SiteInventoryRecordSchema,
  DeviceInventoryRecordSchema,
]);
export type InventoryRecord = z.infer<typeof InventoryRecordSchema>;
export type DeviceInventoryRecord = z.infer<typeof DeviceInventoryRecordSchema>;
export type SiteInventoryRecord = z.infer<typeof SiteInventoryRecordSchema>;
