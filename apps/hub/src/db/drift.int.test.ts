import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { migrate } from "./migrate.ts";
import { SCHEMA_FILE, diffShapes, dmmfOf, expectedShape, liveShape, type SchemaShape } from "./drift.ts";

let db: TestDatabase;
let live: SchemaShape;
beforeAll(async () => {
  db = await createTestDatabase(); // empty: the migrations alone build it
  await migrate(db.url);
  live = await liveShape(db.url);
});
afterAll(() => db.drop());

const schema = readFileSync(SCHEMA_FILE, "utf8");
const diffWith = (text: string) => diffShapes(expectedShape(dmmfOf(text)), live);

describe("drift guard: Prisma schema vs the migrated database", () => {
  it("finds no difference between prisma/schema.prisma and prisma/migrations", () => {
    expect(diffShapes(expectedShape(dmmfOf()), live)).toEqual([]);
    expect(Object.keys(live.tables).length).toBeGreaterThan(0);
  });

  // The guard must be able to fail: each deliberately wrong copy of the schema is caught.
  it.each([
    [
      "a wrong type",
      "name                       String   @db.VarChar(200)",
      "name                       String   @db.VarChar(100)",
      "column sites.name: type is character varying(200) in the database, character varying(100) in the Prisma schema",
    ],
    [
      "wrong nullability",
      "region                     String?  @db.VarChar(100)",
      "region                     String   @db.VarChar(100)",
      "column sites.region: nullable in the database, required in the Prisma schema",
    ],
    [
      "a missing unique constraint",
      'slug                       String   @unique(map: "sites_slug_key") @db.VarChar(63)',
      "slug                       String   @db.VarChar(63)",
      "index sites_slug_key on sites(slug): in the database, missing from the Prisma schema",
    ],
    [
      "an index that does not exist",
      '@@index([createdAt], map: "idempotency_keys_created_at_idx")',
      '@@index([completedAt], map: "idempotency_keys_created_at_idx")',
      "index idempotency_keys_created_at_idx: index on idempotency_keys(created_at) in the database, index on idempotency_keys(completed_at) in the Prisma schema",
    ],
    [
      "a field with no column",
      "  version                    Int      @default(1)\n",
      "  version                    Int      @default(1)\n  colour String?\n",
      "column sites.colour: in the Prisma schema, missing from the database",
    ],
    [
      "a renamed column",
      'netboxSiteId               Int?     @map("netbox_site_id")',
      "netboxSiteId               Int?",
      "column sites.netbox_site_id: in the database, missing from the Prisma schema",
    ],
  ])("fails on %s", (_what, from, to, expected) => {
    expect(schema).toContain(from);
    expect(diffWith(schema.replace(from, to))).toContain(expected);
  });

  it("fails when the database has a column the schema lacks", async () => {
    const other = await createTestDatabase();
    try {
      await migrate(other.url);
      const pg = await import("pg");
      const c = new pg.default.Client({ connectionString: other.url });
      await c.connect();
      await c.query("ALTER TABLE sites ADD COLUMN hand_added text");
      await c.end();
      expect(diffShapes(expectedShape(dmmfOf()), await liveShape(other.url))).toEqual([
        "column sites.hand_added: in the database, missing from the Prisma schema",
      ]);
    } finally {
      await other.drop();
    }
  });
});
