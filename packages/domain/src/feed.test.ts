import { describe, expect, it } from "vitest";
import { INVENTORY_EVENT_TYPES, InventoryEventSchema } from "./feed.ts";

const site = {
  id: "0190a5b4-1234-7abc-8def-0123456789ab",
  slug: "keflavik",
  name: "Keflavik",
  region: null,
  netboxSiteId: null,
  netboxClusterId: null,
  slurmEnabled: false,
  openstackSlurmEnabled: false,
  configureDhcp: true,
  platformClassActivityReady: false,
  impairmentHold: null,
  version: 1,
  createdAt: "2025-06-01T12:00:00.000Z",
  updatedAt: "2025-06-01T12:00:00.000Z",
};
const event = (type: string, resourceType: string, data: unknown) => ({
  position: "1",
  type,
  resourceType,
  resourceId: site.id,
  siteId: site.id,
  data,
  requestId: null,
  occurredAt: "2025-06-01T12:00:00.000Z",
});

describe("InventoryEventSchema: one data schema per event type", () => {
  it("parses an event with its type's data, narrowing data by type", () => {
    const parsed = InventoryEventSchema.parse(event("site.updated", "site", site));
    expect(parsed.type === "site.updated" && parsed.data.slug).toBe("keflavik");
  });

  it("refuses data of another type's shape, a resource type that is not the event's, and unknown types", () => {
    expect(InventoryEventSchema.safeParse(event("device.updated", "device", site)).success).toBe(false);
    expect(InventoryEventSchema.safeParse(event("site.updated", "device", site)).success).toBe(false);
    expect(InventoryEventSchema.safeParse(event("site.renamed", "site", site)).success).toBe(false);
  });

  it("names every type as <resource>.<created|updated|deleted>", () => {
    for (const type of INVENTORY_EVENT_TYPES) expect(type).toMatch(/^[a-z_]+\.(created|updated|deleted)$/);
  });
});
