/**
 * The device list sorted by a field: keyset pages on (value, id) that concatenate to the order
 * one statement gives, in both directions, across runs of equal values and nulls, with every
 * filter, exact while others write; cursors that belong to another sort or other filters are
 * refused; and a sorted page out of 50,000 devices reads an index instead of sorting them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVICE_SORTS, OPERATIONAL_STATUSES, encodeBase64Url, type DeviceBrief, type DeviceSort } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub({ staleAfterMs: 600_000 });
  await seedInventory(hub.db.prisma, 40);
  const sql = (q: string) => hub.db.prisma.$executeRawUnsafe(q);
  // Runs of equal values: the same six names at both sites, one serial on six devices, eight
  // devices without a serial, twelve updated at the same instant; and every filter family's values.
  await sql(`UPDATE devices d SET name = 'dup-' || (x.k - 3) / 6 FROM (
               SELECT id, row_number() OVER (PARTITION BY site_id ORDER BY id) AS k FROM devices) x
              WHERE d.id = x.id AND x.k IN (3, 9, 15, 21, 27, 33)`);
  await sql(`UPDATE devices SET serial = NULL WHERE id IN (SELECT id FROM devices ORDER BY id OFFSET 4 LIMIT 8)`);
  await sql(`UPDATE devices SET serial = 'SNDUP' WHERE id IN (SELECT id FROM devices ORDER BY id OFFSET 20 LIMIT 6)`);
  await sql(
    `UPDATE devices SET updated_at = '2026-11-01T00:00:00Z' WHERE id IN (SELECT id FROM devices ORDER BY id DESC LIMIT 12)`,
  );
  await sql(
    `UPDATE devices SET burn_in_status = 'PASSED' WHERE id IN (SELECT id FROM devices ORDER BY id OFFSET 30 LIMIT 5)`,
  );
  await sql(
    `UPDATE devices SET burn_in_status = 'FAILED' WHERE id IN (SELECT id FROM devices ORDER BY id OFFSET 40 LIMIT 3)`,
  );
  await sql(
    `UPDATE device_observations SET ironic_observed_at = now() - interval '1 hour' WHERE device_id IN (SELECT id FROM devices ORDER BY id OFFSET 50 LIMIT 4)`,
  );
});
afterAll(() => hub.close());

type Page = { items: DeviceBrief[]; count: number; nextCursor: string | null };
const get = (qs: string) => hub.app.inject({ url: `/api/v1/devices?${qs}` });
const list = async (qs: string): Promise<Page> => {
  const res = await get(qs);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Page>();
};
/** Every page of a list, in order; each page reports the same exact count. */
const pageAll = async (qs: string, limit: number, from: string | null = null): Promise<string[]> => {
  const ids: string[] = [];
  let cursor = from;
  let count: number | undefined;
  do {
    const page: Page = await list(`${qs}&brief=true&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    count ??= page.count;
    expect(page.count, qs).toBe(count);
    ids.push(...page.items.map((d) => d.id));
    cursor = page.nextCursor;
  } while (cursor);
  if (!from) expect(ids, qs).toHaveLength(count);
  expect(new Set(ids).size, `${qs}: no device twice`).toBe(ids.length);
  return ids;
};
const COLUMN = { name: "name", serial: "serial", operationalStatus: "operational_status", updatedAt: "updated_at" };
/** Every device in the order one statement gives for a sort (PostgreSQL's default null placement). */
const inOrder = async (sort: DeviceSort): Promise<string[]> => {
  const desc = sort.startsWith("-");
  const column = COLUMN[sort.replace("-", "") as keyof typeof COLUMN];
  const dir = desc ? "DESC" : "ASC";
  const rows = await hub.db.prisma.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id::text FROM devices ORDER BY ${column} ${dir}, id ${dir}`,
  );
  return rows.map((r) => r.id);
};
const column = async (ids: string[], field: "name" | "serial" | "updated_at" | "operational_status") => {
  const rows = await hub.db.prisma.$queryRawUnsafe<{ id: string; v: string | null }[]>(
    `SELECT id::text, ${field}::text AS v FROM devices WHERE id = ANY($1::uuid[])`,
    ids,
  );
  const byId = new Map(rows.map((r) => [r.id, r.v]));
  return ids.map((id) => byId.get(id) ?? null);
};

describe("GET /api/v1/devices?sort=", () => {
  it.each(DEVICE_SORTS)(
    "pages sort=%s exactly as one ordered statement, page boundaries inside equal values",
    async (sort) => {
      expect(await pageAll(`sort=${sort}`, 5)).toEqual(await inOrder(sort));
    },
  );

  it("orders as a person reads it: names, nulls last ascending and first descending, statuses in the enum's order", async () => {
    const names = await column(await pageAll("sort=name", 7), "name");
    expect(names.slice(0, 4)).toEqual(["dup-0", "dup-0", "dup-1", "dup-1"]);
    expect(names.at(-1)).toMatch(/^stavanger-/);
    expect((await column(await pageAll("sort=-name", 7), "name")).slice(0, 2)).toEqual([names.at(-1), names.at(-2)]);

    const serials = await column(await pageAll("sort=serial", 3), "serial");
    expect(serials.slice(-8)).toEqual(Array(8).fill(null));
    expect(serials.filter((s) => s === "SNDUP")).toHaveLength(6);
    const serialsDesc = await column(await pageAll("sort=-serial", 3), "serial");
    expect(serialsDesc.slice(0, 8)).toEqual(Array(8).fill(null));
    expect(serialsDesc[8]).not.toBeNull();

    const [{ labels }] = await hub.db.prisma.$queryRawUnsafe<[{ labels: string[] }]>(
      `SELECT enum_range(NULL::operational_status)::text[] AS labels`,
    );
    expect(labels).toEqual([...OPERATIONAL_STATUSES]);
    const statuses = await column(await pageAll("sort=operationalStatus", 6), "operational_status");
    const rank = statuses.map((s) => OPERATIONAL_STATUSES.indexOf(s as (typeof OPERATIONAL_STATUSES)[number]));
    expect(rank).toEqual([...rank].sort((a, b) => a - b));
    expect(new Set(statuses).size).toBeGreaterThan(2);

    const times = await column(await pageAll("sort=-updatedAt", 5), "updated_at");
    expect(times.at(-1)).toMatch(/^2026-11-01/);
    expect(times.filter((t) => t === times.at(-1))).toHaveLength(12);
  });

  it.each([
    "site=keflavik",
    "role=gpu-node",
    "deviceClass=GPU_COMPUTE",
    "status=active",
    "provisionState=active",
    "operationalStatus=AVAILABLE",
    "operationalStatus=STALE",
    "cordoned=true",
    "stale=false",
    "name=dup",
    "nameExact=dup-3",
    "serial=SNDUP",
    "tag=burn-in-passed",
    "burnIn=none",
    "burnIn=passed",
    "updatedSince=2026-11-02T00:00:00Z",
    "site=stavanger&cordoned=false&deviceClass=GPU_COMPUTE",
  ])("combines every sort with %s", async (filter) => {
    const matching = new Set((await list(`${filter}&limit=1000&brief=true`)).items.map((d) => d.id));
    expect(matching.size, `devices matching ${filter}`).toBeGreaterThan(0);
    for (const sort of DEVICE_SORTS) {
      const expected = (await inOrder(sort)).filter((id) => matching.has(id));
      expect(await pageAll(`${filter}&sort=${sort}`, 4), `${filter}&sort=${sort}`).toEqual(expected);
    }
  });

  it("continues exactly after the cursor's (value, id) while devices are created, renamed and deleted", async () => {
    const first = await list("sort=name&limit=10&brief=true");
    const last = first.items.at(-1)!;
    expect(last.name).toBe("dup-4");
    const site = await hub.db.prisma.site.create({ data: { slug: "reykjavik", name: "Reykjavik" } });
    const p = hub.db.prisma;
    // Same name as the cursor's row, newer id: it follows the cursor. Names before it: never seen.
    await p.device.createMany({
      data: ["dup-4", "dup-0", "aaa"].map((name) => ({ siteId: site.id, name, netboxStatus: "planned" as const })),
    });
    const ahead = (await list(`sort=name&limit=30&brief=true&cursor=${first.nextCursor}`)).items;
    await p.device.update({ where: { id: ahead[3]!.id }, data: { name: "zzz-renamed" } });
    await p.device.delete({ where: { id: ahead[5]!.id } });
    await p.device.update({ where: { id: first.items[0]!.id }, data: { name: "zzz-moved-on" } });
    const rest = await pageAll("sort=name", 10, first.nextCursor);
    const expected = await p.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id::text FROM devices WHERE (name, id) > ($1, $2::uuid) ORDER BY name, id`,
      last.name,
      last.id,
    );
    expect(rest).toEqual(expected.map((r) => r.id));
    const names = await column(rest, "name");
    expect(names[0]).toBe("dup-4");
    expect(names).not.toContain("aaa");
    expect(names.slice(-2)).toEqual(["zzz-moved-on", "zzz-renamed"]);
  });

  it.each([
    ["sort=bogus", "querystring.sort"],
    ["sort=site", "querystring.sort"],
    ["sort=--name", "querystring.sort"],
  ])("refuses %s with a 400 naming sort", async (qs, path) => {
    const res = await get(qs);
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(res.json<{ errors: { path: string }[] }>().errors.map((e) => e.path)).toContain(path);
  });

  it("refuses a cursor used with another sort, without the sort, or with other filters, as a 400 naming cursor", async () => {
    const { nextCursor } = await list("sort=name&site=keflavik&limit=2&brief=true");
    expect(nextCursor).not.toBeNull();
    for (const qs of [
      "sort=-name&site=keflavik",
      "sort=serial&site=keflavik",
      "site=keflavik",
      "sort=name",
      "sort=name&site=keflavik&cordoned=false",
      "sort=name&site=stavanger",
    ]) {
      const res = await get(`${qs}&cursor=${nextCursor}`);
      expect(res.statusCode, qs).toBe(400);
      expect(res.json(), qs).toMatchObject({ code: "cursor_mismatch", errors: [{ path: "cursor" }] });
    }
    // The same list, another page size and representation: the cursor holds.
    expect((await get(`sort=name&site=keflavik&limit=5&cursor=${nextCursor}`)).statusCode).toBe(200);
    const idOrder = (await list("limit=2")).nextCursor;
    expect((await get(`sort=name&cursor=${idOrder}`)).json()).toMatchObject({ code: "cursor_mismatch" });
  });

  it.each([
    ["garbage", "x"],
    ["a time that is not one", { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "updatedAt", v: "soon", f: "" }],
    [
      "a status that is not one",
      { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "operationalStatus", v: "NAP", f: "" },
    ],
    ["a NUL in a name", { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "name", v: "\u0000", f: "" }],
    ["a NUL in a serial", { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "serial", v: "a\u0000", f: "" }],
    ["a name past the column", { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "name", v: "n".repeat(201), f: "" }],
    [
      "a time before year 1",
      { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "-updatedAt", v: "-271821-04-20T00:00:00Z", f: "" },
    ],
    ["year 0", { after: "0190a5b4-1234-7abc-8def-0123456789ab", s: "updatedAt", v: "0000-01-01T00:00:00Z", f: "" }],
  ])("refuses a cursor holding %s as a 400 naming cursor", async (_, doc) => {
    const sort = typeof doc === "string" ? "name" : doc.s;
    const fp = (await list(`sort=${sort}&limit=1`)).nextCursor!;
    const f = (JSON.parse(Buffer.from(fp, "base64url").toString()) as { f: string }).f;
    const cursor = typeof doc === "string" ? doc : encodeBase64Url(JSON.stringify({ ...doc, f }));
    const res = await get(`sort=${sort}&cursor=${cursor}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "invalid_cursor", errors: [{ path: "cursor" }] });
  });
});

describe("a sorted page of 100 out of 50,000 devices", () => {
  type PlanNode = { "Node Type": string; "Index Name"?: string; Plans?: PlanNode[] };
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  /**
   * The plan of the statement Prisma sends for a page (its shape as in the query log: the
   * filter AND the bound after the cursor, ORDER BY (field, id), LIMIT page + 1).
   */
  const plan = async (sort: DeviceSort, site: string | undefined, after: { value: string; id: string } | undefined) => {
    const desc = sort.startsWith("-");
    const col = COLUMN[sort.replace("-", "") as keyof typeof COLUMN];
    const [lt, le, dir] = desc ? ["<", "<=", "DESC"] : [">", ">=", "ASC"];
    const where = [
      site ? `site_id = '${site}'::uuid` : "",
      after
        ? `(${col} ${le} '${after.value}' AND (${col} ${lt} '${after.value}' OR id ${lt} '${after.id}'::uuid))`
        : "",
    ].filter(Boolean);
    const rows = await hub.db.prisma.$queryRawUnsafe<[{ "QUERY PLAN": [{ Plan: PlanNode }] }]>(
      `EXPLAIN (FORMAT JSON) SELECT id FROM devices ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY ${col} ${dir}, id ${dir} LIMIT 101`,
    );
    return nodes(rows[0]["QUERY PLAN"][0].Plan);
  };

  it("reads an index on (field, id), with and without site=, from the first page and from a cursor", async () => {
    const p = hub.db.prisma;
    const sites = await Promise.all(
      ["big-a", "big-b"].map((slug) => p.site.create({ data: { slug, name: slug }, select: { id: true } })),
    );
    for (const [i, site] of sites.entries())
      await p.$executeRawUnsafe(
        `INSERT INTO devices (site_id, name, serial, netbox_status, operational_status, updated_at)
         SELECT $1::uuid, 'big-' || lpad(n::text, 6, '0'), CASE WHEN n % 10 = 0 THEN NULL ELSE 'SN' || (n % 5000) END,
                'active', (enum_range(NULL::operational_status))[1 + n % 9], now() - (n % 1000) * interval '1 minute'
           FROM generate_series($2::int, $3::int) n`,
        site.id,
        i * 25_000,
        i * 25_000 + 24_999,
      );
    await p.$executeRawUnsafe("ANALYZE devices");
    const probe = {
      name: "big-012345",
      serial: "SN2500",
      operationalStatus: "IMPAIRED",
      updatedAt: new Date().toISOString(),
    };
    for (const sort of DEVICE_SORTS)
      for (const site of [undefined, sites[1]!.id])
        for (const cursor of [false, true]) {
          const field = sort.replace("-", "") as keyof typeof probe;
          const after = cursor ? { value: probe[field], id: "0190a5b4-1234-7abc-8def-0123456789ab" } : undefined;
          const types = (await plan(sort, site, after)).map(
            (n) => `${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""}`,
          );
          const label = `${sort} ${site ? "site=" : "fleet"} ${cursor ? "after a cursor" : "first page"}: ${types.join(" > ")}`;
          expect(
            types.filter((t) => t === "Sort"),
            label,
          ).toEqual([]);
          expect(
            types.some((t) => /^Index (Only )?Scan/.test(t)),
            label,
          ).toBe(true);
        }
  });
});
