import { afterAll, beforeAll, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { MIGRATIONS_DIR, MIGRATIONS_TABLE, migrate } from "./migrate.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

it("serialises concurrent migrations: one applies them, the others find nothing to do", async () => {
  const results = await Promise.all(Array.from({ length: 4 }, () => migrate(db.url)));
  const applied = results.map((r) => r.applied.length);
  expect(applied.filter((n) => n > 0)).toHaveLength(1);
  expect(applied.filter((n) => n === 0)).toHaveLength(3);

  const again = await migrate(db.url);
  expect(again.applied).toEqual([]);

  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  const { rows } = await c.query<{ name: string }>("SELECT name FROM pgmigrations ORDER BY id");
  await c.end();
  expect(rows.map((r) => r.name)).toEqual(results.find((r) => r.applied.length)!.applied);
});

it("splitting the SLURM flags keeps what each site meant: SLURM sites keep the release's SLURM step", async () => {
  const fresh = await createTestDatabase();
  try {
    const c = new pg.Client({ connectionString: fresh.url });
    await c.connect();
    try {
      // The schema as it was before the split, with sites written then.
      const files = readdirSync(MIGRATIONS_DIR)
        .filter((f) => f.endsWith(".sql"))
        .sort();
      const before = files.indexOf("1764777604000_openstack_slurm.sql");
      expect(before).toBeGreaterThan(0);
      await runner({
        dbClient: c,
        dir: MIGRATIONS_DIR,
        migrationsTable: MIGRATIONS_TABLE,
        direction: "up",
        count: before,
        noLock: true,
        log: () => {},
      });
      await c.query(
        "INSERT INTO sites (slug, name, slurm_enabled) VALUES ('with-slurm', 'W', true), ('without', 'N', false)",
      );
      await migrate(fresh.url);
      const { rows } = await c.query<{ slug: string; slurm_enabled: boolean; openstack_slurm_enabled: boolean }>(
        "SELECT slug, slurm_enabled, openstack_slurm_enabled FROM sites ORDER BY slug",
      );
      expect(rows).toEqual([
        { slug: "with-slurm", slurm_enabled: true, openstack_slurm_enabled: true },
        { slug: "without", slurm_enabled: false, openstack_slurm_enabled: false },
      ]);
      // The database holds the rule too: SLURM through Nova without SLURM is refused.
      await expect(c.query("UPDATE sites SET slurm_enabled = false WHERE slug = 'with-slurm'")).rejects.toThrow(
        /sites_openstack_slurm_needs_slurm/,
      );
    } finally {
      await c.end();
    }
  } finally {
    await fresh.drop();
  }
});

it("feed data and audit diffs written as jsonb read back the same as json, and a deleted site is still found by its slug", async () => {
  const fresh = await createTestDatabase();
  try {
    const c = new pg.Client({ connectionString: fresh.url });
    await c.connect();
    try {
      const files = readdirSync(MIGRATIONS_DIR)
        .filter((f) => f.endsWith(".sql"))
        .sort();
      const before = files.indexOf("1764900000000_change_records_json.sql");
      expect(before).toBeGreaterThan(0);
      await runner({
        dbClient: c,
        dir: MIGRATIONS_DIR,
        migrationsTable: MIGRATIONS_TABLE,
        direction: "up",
        count: before,
        noLock: true,
        log: () => {},
      });
      const data = { slug: "gone", name: 'Gone "quoted" \\ é', nested: { list: [1, null, "x"] } };
      await c.query(
        `INSERT INTO inventory_events (type, resource_type, resource_id, data)
           VALUES ('site.deleted', 'site', '00000000-0000-4000-8000-000000000001', $1::jsonb)`,
        [JSON.stringify(data)],
      );
      await c.query(
        `INSERT INTO audit_log (principal, action, resource_type, resource_id, diff)
           VALUES ('admin', 'site.delete', 'site', '00000000-0000-4000-8000-000000000001', $1::jsonb)`,
        [JSON.stringify({ slug: { before: "gone", after: null } })],
      );
      await migrate(fresh.url);
      const types = await c.query<{ t: string }>(
        `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute
          WHERE (attrelid, attname) IN (('inventory_events'::regclass, 'data'), ('audit_log'::regclass, 'diff'))`,
      );
      expect(types.rows.map((r) => r.t)).toEqual(["json", "json"]);
      const event = await c.query("SELECT data FROM inventory_events");
      expect(event.rows[0].data).toEqual(data);
      const audit = await c.query("SELECT diff FROM audit_log");
      expect(audit.rows[0].diff).toEqual({ slug: { before: "gone", after: null } });
      // The feed's site filter finds a deleted site by slug through its expression index, on json too.
      await c.query("SET enable_seqscan = off");
      const plan = await c.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT resource_id FROM inventory_events WHERE type = 'site.deleted' AND data->>'slug' = 'gone'",
      );
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("inventory_events_site_deleted_slug_idx");
      const found = await c.query(
        "SELECT resource_id FROM inventory_events WHERE type = 'site.deleted' AND data->>'slug' = 'gone'",
      );
      expect(found.rows).toEqual([{ resource_id: "00000000-0000-4000-8000-000000000001" }]);
    } finally {
      await c.end();
    }
  } finally {
    await fresh.drop();
  }
});
