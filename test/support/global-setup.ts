import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { migrate, MIGRATIONS_DIR } from "../../apps/hub/src/db/migrate.ts";
import { adminQuery, urlFor } from "./postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** Migrates a template database once per run (named after the migrations' content). */
export default async function setup(project: TestProject) {
  const hash = createHash("sha256");
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) hash.update(f).update(readFileSync(join(MIGRATIONS_DIR, f)));
  const name = `fm_template_${hash.digest("hex").slice(0, 12)}`;
  const exists = await adminQuery("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (!exists.rowCount) {
    const building = `${name}_building_${process.pid}`;
    await adminQuery(`CREATE DATABASE ${building}`);
    await migrate(urlFor(building));
    await adminQuery(`ALTER DATABASE ${building} RENAME TO ${name}`).catch(async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${building}`); // another run built it first
    });
  }
  // Databases left by interrupted runs of earlier days.
  const stale = await adminQuery("SELECT datname FROM pg_database WHERE datname LIKE 'fm\\_t\\_%' OR (datname LIKE 'fm\\_template\\_%' AND datname <> $1)", [name]);
  for (const row of stale.rows as { datname: string }[]) {
    const ts = parseInt(row.datname.split("_")[2] ?? "", 36);
    if (!row.datname.startsWith("fm_t_") || (Number.isFinite(ts) && Date.now() - ts > 3600_000)) {
      await adminQuery(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`).catch(() => {});
    }
  }
  project.provide("templateDatabase", name);
}
