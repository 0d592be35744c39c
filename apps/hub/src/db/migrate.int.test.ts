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
