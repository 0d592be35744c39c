import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceListQuerySchema, type Device } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../../testing/inventory.ts";

let hub: TestHub;
let inv: Inventory;
beforeAll(async () => {
  hub = await startTestHub({ staleAfterMs: 600_000 });
  inv = await seedInventory(hub.db.prisma, 40);
});
afterAll(() => hub.close());

type List = { items: Device[]; count: number; nextCursor: string | null };
const list = async (qs: string): Promise<List> => {
  const res = await hub.app.inject({ url: `/api/v1/devices/?${qs}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<List>();
};
const sql = async (q: TemplateStringsArray, ...v: unknown[]): Promise<[{ n: number }]> => {
  const rows = await hub.db.prisma.$queryRaw<{ n: number }[]>(q, ...v);
  return [rows[0]!];
};

describe("GET /api/v1/devices", () => {
  it("filters by site (slug or id) with an exact count matching the database", async () => {
    const bySlug = await list("site=keflavik&limit=5");
    expect(bySlug.count).toBe(40);
    expect(bySlug.items).toHaveLength(5);
    expect(bySlug.items.every((d) => d.site.slug === "keflavik")).toBe(true);
    expect((await list(`site=${inv.sites.stavanger}&limit=1`)).count).toBe(40);
    expect((await list("limit=1")).count).toBe(80);
  });

  it("supports every contract filter: each returns exactly the devices it describes", async () => {
    // Two burn-ins, so the burn-in filter has devices on both sides; undone at the end.
    const seeded = (await list("limit=1000")).items;
    const burnt = [seeded[3]!, seeded[41]!];
    const burnIn = (status: "PASSED" | "FAILED" | null) => ({
      burnInStatus: status,
      burnInJobId: status && "00000000-0000-7000-8000-000000000001",
      burnInAt: status && new Date(),
    });
    await hub.db.prisma.device.update({ where: { id: burnt[0]!.id }, data: burnIn("PASSED") });
    await hub.db.prisma.device.update({ where: { id: burnt[1]!.id }, data: burnIn("FAILED") });
    // The expected rows are picked from the whole unfiltered list, not from the filter's own SQL.
    const all = (await list("limit=1000")).items;
    expect(all).toHaveLength(80);
    const exercised = new Set<string>();
    const exactly = async (qs: string, wanted: (d: Device) => boolean) => {
      for (const key of new URLSearchParams(qs).keys()) exercised.add(key);
      const expected = all.filter(wanted).map((d) => d.id);
      const got = await list(`${qs}&limit=1000`);
      expect(got.items.map((d) => d.id).sort(), qs).toEqual(expected.sort());
      expect(got.count, qs).toBe(expected.length);
      return expected;
    };
    const expectFilter = async (qs: string, wanted: (d: Device) => boolean) => {
      const expected = all.filter(wanted);
      expect(expected.length, `devices matching ${qs} in the seed`).toBeGreaterThan(0);
      expect(expected.length, `devices not matching ${qs} in the seed`).toBeLessThan(all.length);
      await exactly(qs, wanted);
    };
    const [{ n: gpu }] =
      await sql`SELECT count(*)::int AS n FROM devices d JOIN device_roles r ON r.id = d.device_role_id WHERE r.device_class = 'GPU_COMPUTE'`;
    await expectFilter("deviceClass=GPU_COMPUTE", (d) => d.role?.deviceClass === "GPU_COMPUTE");
    expect((await list("deviceClass=GPU_COMPUTE&limit=1")).count).toBe(gpu);
    await expectFilter("role=hypervisor", (d) => d.role?.slug === "hypervisor");
    await expectFilter("status=staged", (d) => d.netbox.status === "staged");
    await expectFilter("provisionState=clean%20failed", (d) => d.ironic.provisionState === "clean failed");
    await expectFilter("operationalStatus=FAILED", (d) => d.operationalStatus === "FAILED");
    await expectFilter("operationalStatus=AVAILABLE", (d) => d.operationalStatus === "AVAILABLE");
    await expectFilter("cordoned=true", (d) => d.cordoned);
    await expectFilter("cordoned=false", (d) => !d.cordoned);
    await expectFilter("tag=burn-in-passed", (d) => d.tags.includes("burn-in-passed"));
    await expectFilter("burnIn=failed", (d) => d.burnIn?.status === "FAILED");
    await expectFilter("burnIn=passed,none", (d) => d.burnIn?.status !== "FAILED");
    // Nothing is stale in the seed (the next test makes a device so): all on one side.
    expect(await exactly("stale=true", (d) => d.stale)).toEqual([]);
    expect(await exactly("stale=false", (d) => !d.stale)).toHaveLength(all.length);
    await expectFilter(
      "site=stavanger&role=gpu-node",
      (d) => d.site.slug === "stavanger" && d.role?.slug === "gpu-node",
    );
    const cleanFailed = await list("provisionState=clean%20failed&limit=1000");
    expect(cleanFailed.items.every((d) => d.operationalStatus === "FAILED")).toBe(true);
    const cordoned = await list("cordoned=true&limit=1000");
    expect(cordoned.items.every((d) => d.operationalStatus === "QUARANTINED")).toBe(true);
    const one = (await list("site=keflavik&limit=1")).items[0]!;
    await expectFilter(`nameExact=${one.name}`, (d) => d.name === one.name);
    await expectFilter(`name=${one.name.slice(-5).toUpperCase()}`, (d) =>
      d.name.toLowerCase().includes(one.name.slice(-5).toLowerCase()),
    );
    await expectFilter(`serial=${one.serial}`, (d) => d.serial === one.serial);
    // updatedSince includes a device updated at that very time and those after, not those before.
    const times = [...new Set(all.map((d) => d.updatedAt))].sort();
    const since = times.length > 1 ? times[times.length - 1]! : burnt[1]!.updatedAt;
    await expectFilter(`updatedSince=${since}`, (d) => d.updatedAt >= since);
    expect((await list(`updatedSince=${new Date(Date.now() + 60_000).toISOString()}`)).count).toBe(0);
    // Every filter the contract names was tried (paging, order and shape are not filters).
    const notFilters = ["limit", "cursor", "page", "sort", "brief"];
    expect([...exercised].sort()).toEqual(
      Object.keys(DeviceListQuerySchema.shape)
        .filter((k) => !notFilters.includes(k))
        .sort(),
    );
    for (const d of burnt) await hub.db.prisma.device.update({ where: { id: d.id }, data: burnIn(null) });
  });

  it("reports a device STALE when a source stops observing it, and filters on it", async () => {
    const target = (await list("site=stavanger&operationalStatus=AVAILABLE&limit=1")).items[0]!;
    await hub.db.prisma.device.update({
      where: { id: target.id },
      data: { observations: { update: { ironicObservedAt: new Date(Date.now() - 3600_000) } } },
    });
    const stale = await list("stale=true&limit=1000");
    expect(stale.items.map((d) => d.id)).toEqual([target.id]);
    expect(stale.items[0]).toMatchObject({ stale: true, operationalStatus: "STALE" });
    expect(stale.items[0]!.conditions.find((c) => c.type === "Fresh")).toMatchObject({ status: "False" });
    expect((await list("operationalStatus=STALE&limit=1000")).items.map((d) => d.id)).toEqual([target.id]);
    expect((await list("operationalStatus=AVAILABLE&limit=1000")).items.map((d) => d.id)).not.toContain(target.id);
    expect((await list("stale=false&limit=1")).count).toBe(79);
  });

  it("pages without skipping or repeating", async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: List = await list(`limit=7${cursor ? `&cursor=${cursor}` : ""}`);
      ids.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toHaveLength(80);
    expect(new Set(ids).size).toBe(80);
  });

  it.each([
    ["deviceClass=GPU", "querystring.deviceClass"],
    ["operationalStatus=BROKEN", "querystring.operationalStatus"],
    ["status=alive", "querystring.status"],
    ["cordoned=yes", "querystring.cordoned"],
    ["updatedSince=yesterday", "querystring.updatedSince"],
    ["limit=0", "querystring.limit"],
    ["site=atlantis", "querystring.site"],
  ])("rejects %s with a 400 naming the parameter", async (qs, path) => {
    const res = await hub.app.inject({ url: `/api/v1/devices?${qs}` });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: { path: string }[] }>().errors.map((e) => e.path)).toContain(path);
  });
});

describe("device operator fields, history, audit and feed", () => {
  it("cordons with a reason, records history, audit and a feed event, then uncordons", async () => {
    const device = (await list("site=keflavik&operationalStatus=AVAILABLE&limit=1")).items[0]!;
    const got = await hub.app.inject({ url: `/api/v1/devices/${device.id}/` });
    expect(got.statusCode).toBe(200);
    const etag = String(got.headers.etag);

    const cordon = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/devices/${device.id}`,
      headers: { "if-match": etag, "x-request-id": "cordon-1" },
      payload: { cordoned: true, cordonReason: "GPU 3 ECC errors" },
    });
    expect(cordon.statusCode, cordon.body).toBe(200);
    expect(cordon.json()).toMatchObject({
      cordoned: true,
      cordonReason: "GPU 3 ECC errors",
      cordonedBy: "local",
      operationalStatus: "QUARANTINED",
      version: device.version + 1,
    });
    expect(cordon.json<Device>().conditions.find((c) => c.type === "Cordoned")).toMatchObject({ status: "True" });

    // A stale ETag is refused and changes nothing.
    const stale = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/devices/${device.id}`,
      headers: { "if-match": etag },
      payload: { cordoned: false },
    });
    expect(stale.statusCode).toBe(412);

    const history = (await hub.app.inject({ url: `/api/v1/devices/${device.id}/history/` })).json<{
      items: { field: string; source: string; oldValue: unknown; newValue: unknown; requestId: string }[];
    }>();
    expect(history.items).toEqual([
      expect.objectContaining({
        field: "cordoned",
        source: "operator",
        oldValue: { cordoned: false },
        newValue: { cordoned: true, reason: "GPU 3 ECC errors", source: "operator" },
        requestId: "cordon-1",
      }),
      expect.objectContaining({
        field: "operationalStatus",
        source: "hub",
        oldValue: "AVAILABLE",
        newValue: "QUARANTINED",
      }),
    ]);

    const audit = (await hub.app.inject({ url: `/api/v1/audit/?resourceType=device&resourceId=${device.id}` })).json<{
      items: { action: string; principal: string; requestId: string; diff: Record<string, unknown> }[];
    }>();
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({ action: "device.update", principal: "local", requestId: "cordon-1" });
    expect(audit.items[0]!.diff).toMatchObject({
      cordoned: { before: false, after: true },
      operationalStatus: { before: "AVAILABLE", after: "QUARANTINED" },
    });

    const feed = (await hub.app.inject({ url: "/api/v1/feeds/inventory/?after=0&limit=1000" })).json<{
      items: { type: string; resourceId: string; requestId: string | null; data: { cordoned?: boolean } }[];
    }>();
    const mine = feed.items.filter((e) => e.resourceId === device.id && e.type === "device.updated");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ requestId: "cordon-1", data: { cordoned: true } });

    const uncordon = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/devices/${device.id}`,
      payload: { cordoned: false },
    });
    expect(uncordon.json()).toMatchObject({
      cordoned: false,
      cordonReason: null,
      cordonedBy: null,
      operationalStatus: "AVAILABLE",
    });
    const after = (await hub.app.inject({ url: `/api/v1/devices/${device.id}/history?field=cordoned` })).json<{
      items: unknown[];
      count: number;
    }>();
    expect(after.count).toBe(2);
  });

  it("rejects bad operator input and writes nothing", async () => {
    const device = (await list("site=stavanger&cordoned=false&limit=1")).items[0]!;
    const before = await hub.db.prisma.auditLog.count();
    const cases: [Record<string, unknown>, number][] = [
      [{ cordoned: true }, 400], // no reason
      [{ cordoned: true, cordonReason: "" }, 400],
      [{ cordonReason: "why" }, 422], // a reason without cordoning
      [{ operationalStatus: "AVAILABLE" }, 400], // not an operator field
      [{ name: "renamed" }, 400],
      [{}, 400],
      [{ notes: 5 }, 400],
    ];
    for (const [payload, status] of cases) {
      const res = await hub.app.inject({ method: "PATCH", url: `/api/v1/devices/${device.id}`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.headers["content-type"]).toMatch(/problem\+json/);
    }
    expect(await hub.db.prisma.auditLog.count()).toBe(before);
    expect((await hub.app.inject({ url: `/api/v1/devices/${device.id}` })).json()).toMatchObject({
      version: device.version,
      cordoned: false,
    });
  });

  it("answers 404 for unknown devices, history included", async () => {
    const id = "0190a5b4-0000-7000-8000-00000000abcd";
    for (const url of [`/api/v1/devices/${id}`, `/api/v1/devices/${id}/history`]) {
      const res = await hub.app.inject({ url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: "device_not_found" });
    }
    expect(
      (await hub.app.inject({ method: "PATCH", url: `/api/v1/devices/${id}`, payload: { notes: "x" } })).statusCode,
    ).toBe(404);
  });
});

describe("GET /api/v1/device-roles", () => {
  it("lists roles with their class and whether a site uses them", async () => {
    const all = (await hub.app.inject({ url: "/api/v1/device-roles/" })).json<{
      items: { slug: string; deviceClass: string; inUse: boolean; deviceCount: number }[];
      count: number;
    }>();
    expect(all.count).toBe(4);
    expect(all.items.find((r) => r.slug === "hypervisor")).toMatchObject({
      deviceClass: "CPU_HYPERVISOR",
      inUse: true,
    });
    // Give stavanger's hypervisors another role: the hypervisor role is then unused there.
    await hub.db.prisma.device.updateMany({
      where: { siteId: inv.sites.stavanger, deviceRoleId: inv.roles.hypervisor },
      data: { deviceRoleId: inv.roles["cpu-node"] },
    });
    const used = (await hub.app.inject({ url: "/api/v1/device-roles/?site=stavanger&inUse=true" })).json<{
      items: { slug: string; deviceCount: number }[];
    }>();
    expect(used.items.map((r) => r.slug).sort()).toEqual(["cpu-node", "gpu-node", "leaf-switch"]);
    const [{ n }] =
      await sql`SELECT count(*)::int AS n FROM devices WHERE site_id = ${inv.sites.stavanger}::uuid AND device_role_id = ${inv.roles["gpu-node"]}::uuid`;
    expect(used.items.find((r) => r.slug === "gpu-node")!.deviceCount).toBe(n);
    const unused = (await hub.app.inject({ url: "/api/v1/device-roles/?site=stavanger&inUse=false" })).json<{
      items: { slug: string; inUse: boolean }[];
    }>();
    expect(unused.items).toEqual([expect.objectContaining({ slug: "hypervisor", inUse: false })]);
    expect((await hub.app.inject({ url: "/api/v1/device-roles/?site=nowhere" })).statusCode).toBe(400);
    const types = (await hub.app.inject({ url: "/api/v1/device-types" })).json<{
      items: { cpuArchitecture: string }[];
    }>();
    expect(types.items.map((t) => t.cpuArchitecture).sort()).toEqual(["aarch64", "x86_64", "x86_64", "x86_64"]);
  });
});
