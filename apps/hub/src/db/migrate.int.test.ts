import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { migrate } from "./migrate.ts";

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
