/** A migrated connector database for integration tests, on the test PostgreSQL. */
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { migrate } from "../queue/migrate.ts";

export async function connectorDatabase(): Promise<{ db: TestDatabase; pool: pg.Pool; close(): Promise<void> }> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const c = await pool.connect();
  try {
    await migrate(c);
  } finally {
    c.release();
  }
  return {
    db,
    pool,
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
}
