// `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
import { pino } from "pino";
import { LOG_FORMATTERS } from "@fm/domain";
import { parseEnv } from "../env.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrate } from "./migrate.ts";

const log = pino({ name: "db:migrate", formatters: LOG_FORMATTERS });
const env = parseEnv();
const embedded = env.DATABASE_URL ? undefined : await startEmbeddedPostgres(env.FM_DATA_DIR, log);
try {
  const { applied } = await migrate(env.DATABASE_URL ?? embedded!.url, log);
  log.info({ applied: applied.length }, applied.length ? "migrated" : "schema already up to date");
} finally {
  await embedded?.stop();
}
