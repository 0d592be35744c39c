#!/usr/bin/env node
// Generates the Prisma client (apps/hub/src/generated/prisma) from prisma/schema.prisma.
// Prisma's CLI would otherwise try to download its native schema engine, which is not
// needed for `generate` and cannot be fetched here; pointing it at /bin/false stops that.
// Skips the work when the schema has not changed since the last generation.
// Why Prisma runs this way here (client only, SQL migrations): docs/peers.md, "Prisma".
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const schema = readFileSync(join(root, "prisma/schema.prisma"));
const pkg = readFileSync(join(root, "node_modules/prisma/package.json"));
const digest = createHash("sha256").update(schema).update(pkg).digest("hex");
const out = join(root, "apps/hub/src/generated/prisma");
const stamp = join(out, ".schema-sha256");
if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) process.exit(0);

execFileSync(join(root, "node_modules/.bin/prisma"), ["generate"], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: "/bin/false", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
});
writeFileSync(stamp, digest);
