// `npm run seed:demo`: demo inventory in DATABASE_URL (or the embedded database), migrated first.
import { pino } from "pino";
import { LOG_FORMATTERS } from "@fm/domain";
import { parseEnv } from "../env.ts";
import { createDatabase } from "../db/client.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { migrate } from "../db/migrate.ts";
import { seedDemo } from "./demo.ts";

const log = pino({ name: "seed:demo", formatters: LOG_FORMATTERS });
const env = parseEnv();
const embedded = env.DATABASE_URL ? undefined : await startEmbeddedPostgres(env.FM_DATA_DIR, log);
const url = env.DATABASE_URL ?? embedded!.url;
try {
  await migrate(url, log);
  const db = createDatabase(url, { poolMax: 4 });
  const perSite = Number(process.env.DEMO_DEVICES_PER_SITE ?? 150);
  const result = await seedDemo(db.prisma, { devicesPerSite: perSite });
  log.info(result, result.devices ? "demo inventory created" : "demo inventory already present");
  await db.close();
} finally {
  await embedded?.stop();
}
