import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Site, SiteList } from "@fm/domain";
import { eventually } from "@fm/test-support/wait";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
});
afterAll(() => hub.close());

const create = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  hub.app.inject({ method: "POST", url: "/api/v1/sites/", payload, headers });

describe("sites CRUD", () => {
  it("creates, reads (with and without trailing slash), updates and deletes a site", async () => {
    const created = await create({ slug: "keflavik", name: "Keflavik", region: "eu-north", netboxSiteId: 12 });
    expect(created.statusCode).toBe(201);
    const site = created.json<Site>();
    expect(site).toMatchObject({
      slug: "keflavik",
      name: "Keflavik",
      region: "eu-north",
      netboxSiteId: 12,
      netboxClusterId: null,
      slurmEnabled: false,
      openstackSlurmEnabled: false,
      version: 1,
    });
    expect(created.headers.location).toBe(`/api/v1/sites/${site.id}`);
    expect(created.headers.etag).toBe(`"${site.id}.1"`);

    for (const url of [`/api/v1/sites/${site.id}`, `/api/v1/sites/${site.id}/`]) {
      const got = await hub.app.inject({ url });
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(site);
      expect(got.headers.etag).toBe(created.headers.etag);
    }

    const patched = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}/`,
      headers: { "if-match": String(created.headers.etag) },
      payload: { name: "Keflavik DC", slurmEnabled: true, region: null },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      name: "Keflavik DC",
      slurmEnabled: true,
      region: null,
      version: 2,
      slug: "keflavik",
    });
    expect(patched.headers.etag).toBe(`"${site.id}.2"`);

    // The old ETag is now stale: both PATCH and DELETE refuse it, and nothing changes.
    const stale = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      headers: { "if-match": String(created.headers.etag) },
      payload: { name: "lost update" },
    });
    expect(stale.statusCode).toBe(412);
    const staleDelete = await hub.app.inject({
      method: "DELETE",
      url: `/api/v1/sites/${site.id}`,
      headers: { "if-match": String(created.headers.etag) },
    });
    expect(staleDelete.statusCode).toBe(412);
    expect((await hub.app.inject({ url: `/api/v1/sites/${site.id}` })).json()).toMatchObject({
      name: "Keflavik DC",
      version: 2,
    });

    const del = await hub.app.inject({
      method: "DELETE",
      url: `/api/v1/sites/${site.id}/`,
      headers: { "if-match": String(patched.headers.etag) },
    });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe("");
    expect((await hub.app.inject({ url: `/api/v1/sites/${site.id}` })).statusCode).toBe(404);
    expect((await hub.app.inject({ method: "DELETE", url: `/api/v1/sites/${site.id}` })).statusCode).toBe(404);
  });

  it("accepts If-Match: * and a list containing the current tag", async () => {
    const site = (await create({ slug: "wildcard", name: "W" })).json<Site>();
    const star = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      headers: { "if-match": "*" },
      payload: { name: "W2" },
    });
    expect(star.statusCode).toBe(200);
    const list = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      headers: { "if-match": `"nope", ${String(star.headers.etag)}` },
      payload: { name: "W3" },
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ name: "W3", version: 3 });
  });

  it("rejects a slug change, an empty patch and bad values without writing", async () => {
    const site = (await create({ slug: "immutable", name: "I" })).json<Site>();
    for (const payload of [{ slug: "other" }, {}, { name: "" }, { netboxSiteId: -1 }, { slurmEnabled: "yes" }]) {
      const res = await hub.app.inject({ method: "PATCH", url: `/api/v1/sites/${site.id}`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await hub.app.inject({ url: `/api/v1/sites/${site.id}` })).json()).toEqual(site);
  });

  it("keeps SLURM through OpenStack apart from SLURM, and refuses the first without the second", async () => {
    // A standalone-Ironic site with a SLURM cluster: SLURM on, OpenStack's off.
    const standalone = await create({ slug: "standalone", name: "S", slurmEnabled: true });
    expect(standalone.json()).toMatchObject({ slurmEnabled: true, openstackSlurmEnabled: false });

    const refused = await create({ slug: "nova-no-slurm", name: "N", openstackSlurmEnabled: true });
    expect(refused.statusCode).toBe(422);
    expect(refused.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(refused.json()).toMatchObject({ code: "site_flags_conflict" });
    expect((await hub.app.inject({ url: "/api/v1/sites?slug=nova-no-slurm" })).json()).toMatchObject({ count: 0 });

    const site = standalone.json<Site>();
    const nova = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      payload: { openstackSlurmEnabled: true },
    });
    expect(nova.json()).toMatchObject({ slurmEnabled: true, openstackSlurmEnabled: true, version: 2 });
    // Turning SLURM off while Nova still reaches it would leave the second flag meaning nothing.
    const off = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      payload: { slurmEnabled: false },
    });
    expect(off.statusCode).toBe(422);
    expect((await hub.app.inject({ url: `/api/v1/sites/${site.id}` })).json()).toMatchObject({ version: 2 });
    const both = await hub.app.inject({
      method: "PATCH",
      url: `/api/v1/sites/${site.id}`,
      payload: { slurmEnabled: false, openstackSlurmEnabled: false },
    });
    expect(both.json()).toMatchObject({ slurmEnabled: false, openstackSlurmEnabled: false, version: 3 });
  });

  it.each([["UPPER"], ["-leading-dash"], ["has_underscore"], ["a".repeat(64)], [""], ["spa ce"]])(
    "rejects slug %j",
    async (slug) => {
      const res = await create({ slug, name: "x" });
      expect(res.statusCode).toBe(400);
      expect(res.json<{ errors: { path: string }[] }>().errors.map((e) => e.path)).toContain("body.slug");
    },
  );

  it("filters by slug, region and text", async () => {
    await create({ slug: "filter-a", name: "Alpha Hall", region: "r-one" });
    await create({ slug: "filter-b", name: "Beta Hall", region: "r-two" });
    const bySlug = (await hub.app.inject({ url: "/api/v1/sites?slug=filter-a" })).json<SiteList>();
    expect(bySlug.items.map((s) => s.slug)).toEqual(["filter-a"]);
    expect(bySlug.count).toBe(1);
    const byRegion = (await hub.app.inject({ url: "/api/v1/sites?region=r-two" })).json<SiteList>();
    expect(byRegion.items.map((s) => s.slug)).toEqual(["filter-b"]);
    const byText = (await hub.app.inject({ url: "/api/v1/sites?q=HALL" })).json<SiteList>();
    expect(byText.items.map((s) => s.slug).sort()).toEqual(["filter-a", "filter-b"]);
  });
});

describe("idempotency keys", () => {
  it("replays the first response for the same key and body, 422 for another body", async () => {
    const headers = { "idempotency-key": "create-idem-site-1" };
    const first = await create({ slug: "idem-site", name: "Idem" }, headers);
    expect(first.statusCode).toBe(201);
    const again = await create({ name: "Idem", slug: "idem-site" }, headers); // same body, other key order
    expect(again.statusCode).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe(first.headers.location);
    const other = await create({ slug: "idem-site-2", name: "Idem" }, headers);
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
    expect(await hub.db.prisma.site.count({ where: { slug: { startsWith: "idem-site" } } })).toBe(1);
  });

  it("remembers a 4xx outcome too, and a new key runs the request again", async () => {
    await create({ slug: "idem-taken", name: "T" });
    const headers = { "idempotency-key": "dup-attempt" };
    const first = await create({ slug: "idem-taken", name: "T" }, headers);
    expect(first.statusCode).toBe(409);
    const replay = await create({ slug: "idem-taken", name: "T" }, headers);
    expect(replay.statusCode).toBe(409);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
  });
  it("a response it cannot record at once still reaches the client, and a repeat replays it once recorded", async () => {
    // The first attempt to record this key's response fails (as it does when the connection
    // pool is exhausted just then): a trigger refuses it once (a sequence counts the attempts,
    // and a sequence is not rolled back with the refused update).
    await hub.db.prisma.$executeRawUnsafe("CREATE SEQUENCE test_record_attempts");
    await hub.db.prisma.$executeRawUnsafe(`
      CREATE FUNCTION test_refuse_first_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.key = 'record-late' AND NEW.response_status IS NOT NULL AND nextval('test_record_attempts') = 1 THEN
          RAISE EXCEPTION 'recording refused by the test';
        END IF;
        RETURN NEW;
      END $$`);
    await hub.db.prisma.$executeRawUnsafe(`
      CREATE TRIGGER test_refuse_first_record BEFORE UPDATE ON idempotency_keys
        FOR EACH ROW EXECUTE FUNCTION test_refuse_first_record()`);
    const headers = { "idempotency-key": "record-late" };
    const first = await create({ slug: "idem-late", name: "Late" }, headers);
    expect(first.statusCode, first.body).toBe(201);
    const replay = await eventually(async () => {
      const again = await create({ slug: "idem-late", name: "Late" }, headers);
      expect(again.statusCode, again.body).toBe(201);
      return again;
    });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json()).toEqual(first.json());
    expect(await hub.db.prisma.site.count({ where: { slug: "idem-late" } })).toBe(1);
  });
});

describe("pagination", () => {
  it("pages with an exact count and neither skips nor repeats rows while others insert", async () => {
    const prefix = "page-";
    const initial = 150;
    for (let i = 0; i < initial; i += 50) {
      await hub.db.prisma.site.createMany({
        data: Array.from({ length: 50 }, (_, j) => ({ slug: `${prefix}${i + j}`, name: `P${i + j}` })),
      });
    }
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let inserted = 0;
    let pages = 0;
    do {
      const url = `/api/v1/sites?q=${prefix}&limit=7${cursor ? `&cursor=${cursor}` : ""}`;
      // Concurrent writers: each page races with two inserts.
      const [res] = await Promise.all([
        hub.app.inject({ url }),
        create({ slug: `${prefix}new-${inserted++}`, name: "N" }),
        create({ slug: `${prefix}new-${inserted++}`, name: "N" }),
      ]);
      expect(res.statusCode).toBe(200);
      const page = res.json<SiteList>();
      expect(page.items.length).toBeLessThanOrEqual(7);
      expect(page.count).toBeGreaterThanOrEqual(initial);
      seen.push(...page.items.map((s) => s.slug));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 200);

    expect(new Set(seen).size).toBe(seen.length); // nothing repeated
    for (let i = 0; i < initial; i++) expect(seen).toContain(`${prefix}${i}`); // nothing that existed skipped
    const final = (await hub.app.inject({ url: `/api/v1/sites?q=${prefix}&limit=1` })).json<SiteList>();
    expect(final.count).toBe(initial + inserted);
  });

  it("uses the default limit of 100 and ends with a null cursor", async () => {
    await hub.db.prisma.site.createMany({
      data: Array.from({ length: 101 }, (_, i) => ({ slug: `default-limit-${i}`, name: `D${i}` })),
    });
    const first = (await hub.app.inject({ url: "/api/v1/sites" })).json<SiteList>();
    expect(first.items).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const all = (await hub.app.inject({ url: "/api/v1/sites?limit=1000" })).json<SiteList>();
    expect(all.items.length).toBe(all.count);
    expect(all.nextCursor).toBeNull();
  });
});
