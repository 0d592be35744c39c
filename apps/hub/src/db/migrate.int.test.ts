import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { migrate } from "./migrate.ts";
import { databaseBefore } from "../testing/migrations.ts";

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
  // The schema as it was before the split, with sites written then.
  const db = await databaseBefore("1764777604000_openstack_slurm.sql");
  try {
    const c = db.client;
    await c.query(
      "INSERT INTO sites (slug, name, slurm_enabled) VALUES ('with-slurm', 'W', true), ('without', 'N', false)",
    );
    await db.migrate();
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
    await db.drop();
  }
});

it("feed data and audit diffs written as jsonb read back the same as json, and a deleted site is still found by its slug", async () => {
  const db = await databaseBefore("1764900000000_change_records_json.sql");
  try {
    const c = db.client;
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
    await db.migrate();
    const types = await c.query<{ t: string }>(
      `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute
        WHERE (attrelid, attname) IN (('inventory_events'::regclass, 'data'), ('audit_log'::regclass, 'diff'))`,
    );
    expect(types.rows.map((r) => r.t)).toEqual(["json", "json"]);
    expect((await c.query("SELECT data FROM inventory_events")).rows[0].data).toEqual(data);
    expect((await c.query("SELECT diff FROM audit_log")).rows[0].diff).toEqual({
      slug: { before: "gone", after: null },
    });
    // The feed's site filter finds a deleted site by slug through its expression index, on json too.
    await c.query("SET enable_seqscan = off");
    const bySlug = "SELECT resource_id FROM inventory_events WHERE type = 'site.deleted' AND data->>'slug' = 'gone'";
    const plan = await c.query<{ "QUERY PLAN": string }>(`EXPLAIN ${bySlug}`);
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("inventory_events_site_deleted_slug_idx");
    expect((await c.query(bySlug)).rows).toEqual([{ resource_id: "00000000-0000-4000-8000-000000000001" }]);
  } finally {
    await db.drop();
  }
});

it("feed data converted from jsonb is rewritten compact: a page sends the bytes JSON.stringify of the parsed data wrote", async () => {
  const db = await databaseBefore("1765100000000_feed_compact_json.sql");
  try {
    const c = db.client;
    const data = {
      slug: "old",
      name: 'Old "quoted", \\ é: 🛰️',
      nested: { list: [1, null, "x, y", { "k: v": [] }], empty: {}, none: [] },
      n: 12.5,
    };
    // As 1764900000000 left an event written as jsonb: jsonb's text, spaced.
    await c.query(
      `INSERT INTO inventory_events (type, resource_type, resource_id, data)
         VALUES ('site.updated', 'site', 'old', ($1::jsonb)::json), ('site.updated', 'site', 'new', $2::json)`,
      [JSON.stringify(data), JSON.stringify({ note: 'already compact, with ", " and ": " inside' })],
    );
    const spaced = await c.query<{ t: string }>(
      "SELECT data::text AS t FROM inventory_events WHERE resource_id = 'old'",
    );
    expect(spaced.rows[0]!.t).toContain('": ');
    await db.migrate();
    const { rows } = await c.query<{ id: string; t: string }>(
      "SELECT resource_id AS id, data::text AS t FROM inventory_events ORDER BY seq",
    );
    expect(rows).toEqual([
      { id: "old", t: JSON.stringify(JSON.parse(spaced.rows[0]!.t)) },
      { id: "new", t: JSON.stringify({ note: 'already compact, with ", " and ": " inside' }) },
    ]);
  } finally {
    await db.drop();
  }
});

it("observation times move to device_observations with their values; every device gets its row, and loses it with the device", async () => {
  const db = await databaseBefore("1764900002000_device_observations.sql");
  try {
    const c = db.client;
    const at = new Date("2026-12-04T10:00:00.123Z");
    await c.query(
      `WITH s AS (INSERT INTO sites (slug, name) VALUES ('obs', 'O') RETURNING id)
       INSERT INTO devices (site_id, name, netbox_observed_at, ironic_observed_at)
       SELECT id, 'obs-1', $1::timestamptz, $1::timestamptz FROM s UNION ALL SELECT id, 'obs-2', NULL, NULL FROM s`,
      [at],
    );
    await db.migrate();
    const observations = async () =>
      (
        await c.query(
          `SELECT d.name, o.netbox_observed_at, o.ironic_observed_at, o.slurm_observed_at, o.health_observed_at
             FROM devices d LEFT JOIN device_observations o ON o.device_id = d.id ORDER BY d.name`,
        )
      ).rows;
    expect(await observations()).toEqual([
      {
        name: "obs-1",
        netbox_observed_at: at,
        ironic_observed_at: at,
        slurm_observed_at: null,
        health_observed_at: null,
      },
      {
        name: "obs-2",
        netbox_observed_at: null,
        ironic_observed_at: null,
        slurm_observed_at: null,
        health_observed_at: null,
      },
    ]);
    // The device rows no longer carry them.
    const columns = await c.query(
      "SELECT attname FROM pg_attribute WHERE attrelid = 'devices'::regclass AND attname LIKE '%observed_at' AND NOT attisdropped",
    );
    expect(columns.rows).toEqual([]);
    // A device made by any statement (several at once here) has its row; a deleted one takes its row along.
    await c.query(
      "INSERT INTO devices (site_id, name) SELECT site_id, n FROM devices, unnest(ARRAY['obs-3', 'obs-4']) n WHERE name = 'obs-1'",
    );
    expect((await observations()).map((r) => [r.name, r.netbox_observed_at])).toEqual([
      ["obs-1", at],
      ["obs-2", null],
      ["obs-3", null],
      ["obs-4", null],
    ]);
    await c.query("DELETE FROM devices WHERE name IN ('obs-1', 'obs-3')");
    expect(Number((await c.query("SELECT count(*) AS n FROM device_observations")).rows[0].n)).toBe(2);
  } finally {
    await db.drop();
  }
});
