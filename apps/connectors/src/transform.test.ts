import { describe, expect, it } from "vitest";
import { InventoryRecordSchema } from "@fm/domain";
import { recordsOfEvent, recordsOfSnapshot } from "./transform.ts";
import { device, event, site } from "./testing/fixtures.ts";

const sin1 = site("sin1");
const wdc1 = site("wdc1");
const ctx = { connector: "matrix-prod", siteIds: new Set([sin1.id]) };

describe("feed events to inventory records", () => {
  it("makes a versioned device record with a stable id from a device event of a configured site", () => {
    const d = device(sin1, "gpu-001");
    const [out] = recordsOfEvent(event(41, "device.updated", d, sin1.id), ctx);
    expect(InventoryRecordSchema.parse(out!.record)).toEqual(out!.record);
    expect(out).toEqual({
      resourceKey: `device:${d.id}`,
      record: expect.objectContaining({
        schemaVersion: 1,
        kind: "device",
        op: "upsert",
        recordId: `matrix-prod:41:device:${d.id}`,
        feedPosition: "41",
        deviceId: d.id,
        siteSlug: "sin1",
        name: "gpu-001",
        model: "HGX H100",
        rack: "R01",
        rackPosition: 12,
        role: "gpu-node",
        deviceClass: "GPU_COMPUTE",
        provisionState: "available",
        operationalStatus: "AVAILABLE",
        version: 3,
      }),
    });
    // The same event read again (after a crash) gives the same id: the receiver de-duplicates.
    expect(recordsOfEvent(event(41, "device.updated", d, sin1.id), ctx)[0]!.record.recordId).toBe(out!.record.recordId);
  });

  it("skips other sites' devices and resources it does not ship", () => {
    expect(recordsOfEvent(event(1, "device.created", device(wdc1, "x"), wdc1.id), ctx)).toEqual([]);
    const role = {
      id: "0b3f2a4e-0c39-4a0e-9a53-3a9d3a1f7c11",
      slug: "gpu-node",
      name: "GPU",
      deviceClass: "GPU_COMPUTE",
    };
    expect(recordsOfEvent(event(2, "device_role.created", role, null), ctx)).toEqual([]);
  });

  it("turns a deleted site into a delete record", () => {
    const [out] = recordsOfEvent(event(9, "site.deleted", sin1, sin1.id), ctx);
    expect(out!.record).toMatchObject({
      kind: "site",
      op: "delete",
      siteId: sin1.id,
      recordId: `matrix-prod:9:site:${sin1.id}`,
    });
  });

  it("names snapshot records after the snapshot's position", () => {
    const d = device(sin1, "gpu-002");
    const [out] = recordsOfSnapshot(
      { kind: "device", data: d },
      { position: "77", takenAt: "2026-11-02T11:00:00.000Z" },
      ctx,
    );
    expect(out!.record).toMatchObject({
      recordId: `matrix-prod:snapshot-77:device:${d.id}`,
      feedPosition: "77",
      changedAt: "2026-11-02T11:00:00.000Z",
    });
    expect(
      recordsOfSnapshot({ kind: "site", data: wdc1 }, { position: "77", takenAt: "2026-11-02T11:00:00.000Z" }, ctx),
    ).toEqual([]);
  });

  it("keeps only its own sites' devices from a snapshot, behind the hub's filter (defence in depth)", () => {
    const at = { position: "77", takenAt: "2026-11-02T11:00:00.000Z" };
    const ours = device(sin1, "gpu-003");
    const theirs = device(wdc1, "gpu-003");
    expect(recordsOfSnapshot({ kind: "device", data: theirs }, at, ctx)).toEqual([]);
    expect(recordsOfSnapshot({ kind: "device", data: ours }, at, ctx)).toHaveLength(1);
  });
});
