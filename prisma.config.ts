import { defineConfig } from "prisma/config";

// Prisma is used for its client only; migrations are SQL files applied by node-pg-migrate.
export default defineConfig({
  schema: "prisma/schema.prisma",
});
