import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../testing/inventory.ts";

let hub: TestHub;
let inv: Inventory;
let deviceId: string;
beforeAll(async () => {
  hub = await startTestHub({ staleAfterMs: 600_000 });
  inv = await seedInventory(hub.db.prisma, 1);
  deviceId = (await hub.db.prisma.device.findFirstOrThrow({ where: { siteId: inv.sites.keflavik } })).id;
  // Five cordon/uncordon rounds: history rows and audit entries on one device.
  for (let i = 0; i < 5; i++) {
    await patch({ cordoned: true, cordonReason: `round ${i}` });
    await patch({ cordoned: false });
  }
  for (let i = 0; i < 7; i++)
    await hub.db.prisma.job.create({
      data: { name: `order-${i}`, kind: "UNENROL", siteId: inv.sites.keflavik, createdBy: "test" },
    });
});
afterAll(() => hub.close());

async function patch(payload: object): Promise<void> {
  const got = await hub.app.inject({ url: `/api/v1/devices/${deviceId}` });
  const res = await hub.app.inject({
    method: "PATCH",
    url: `/api/v1/devices/${deviceId}`,
    headers: { "if-match": String(got.headers.etag) },
    payload,
  });
  expect(res.statusCode, res.body).toBe(200);
}

type Page = { items: { id: string | number }[]; count: number; nextCursor: string | null };
const get = async (url: string): Promise<Page> => {
  const res = await hub.app.inject({ url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Page>();
};
/** Every id of a list, following nextCursor page by page. */
async function walk(path: string, qs: string): Promise<{ ids: (string | number)[]; pages: number; count: number }> {
  const ids: (string | number)[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let count = 0;
  do {
    const page = await get(`${path}?${qs}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    ids.push(...page.items.map((i) => i.id));
    count = page.count;
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { ids, pages, count };
}

const LISTS = [
  ["audit log", "/api/v1/audit"],
  ["jobs", "/api/v1/jobs"],
  ["device history", () => `/api/v1/devices/${deviceId}/history`],
] as const;

describe("?order= on the lists people read newest first", () => {
  for (const [name, path] of LISTS) {
    it(`${name}: order=desc pages through the ascending list backwards, cursor by cursor`, async () => {
      const url = typeof path === "string" ? path : path();
      const asc = (await walk(url, "limit=1000")).ids;
      expect(asc.length).toBeGreaterThanOrEqual(7);
      // The default stays ascending: the same as asking for it.
      expect((await walk(url, "limit=1000&order=asc")).ids).toEqual(asc);
      const desc = await walk(url, "limit=3&order=desc");
      expect(desc.ids).toEqual([...asc].reverse());
      expect(desc.pages).toBe(Math.ceil(asc.length / 3));
      expect(desc.count).toBe(asc.length);
    });
  }

  it("a fresh cordon is the first history entry and the first audit entry newest first", async () => {
    await patch({ cordoned: true, cordonReason: "fresh" });
    const history = (await get(`/api/v1/devices/${deviceId}/history?field=cordoned&order=desc&limit=1`))
      .items as unknown as {
      field: string;
      newValue: unknown;
    }[];
    expect(history).toEqual([
      expect.objectContaining({
        field: "cordoned",
        newValue: expect.objectContaining({ cordoned: true, reason: "fresh" }),
      }),
    ]);
    const audit = (await get(`/api/v1/audit?order=desc&limit=1`)).items as unknown as {
      resourceId: string;
      diff: Record<string, unknown>;
    }[];
    expect(audit[0]).toMatchObject({ resourceId: deviceId, diff: { cordonReason: { before: null, after: "fresh" } } });
    await patch({ cordoned: false });
  });

  it("refuses an order other than asc or desc", async () => {
    for (const [, path] of LISTS) {
      const res = await hub.app.inject({ url: `${typeof path === "string" ? path : path()}?order=newest` });
      expect(res.statusCode).toBe(400);
      expect(res.headers["content-type"]).toContain("application/problem+json");
    }
  });
});
