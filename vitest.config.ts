import { defineConfig } from "vitest/config";

/**
 * Three projects, each runnable alone (`npm run test:unit|test:int|test:e2e`):
 *  - unit: pure code, no database and no peer (`*.test.ts`, and `test/*.test.ts` about the repository);
 *  - integration: one package against real PostgreSQL and real peers (`*.int.test.ts`), and
 *    infra/'s alert rules and Helm charts against promtool and helm (`test/*.int.test.ts`);
 *  - e2e: several real processes talking over HTTP (`test/*.e2e.test.ts`).
 * The database projects share a global setup that migrates one template database per run, and
 * one that starts an S3 server (gofakes3) per run.
 */
const DATABASE_SETUP = ["apps/hub/src/testing/global-setup.ts"];
/** The run's S3 server (gofakes3), for the burn-in artifact tests. */
const S3_SETUP = "packages/test-support/src/s3-global-setup.ts";
const SOURCES = ["apps/*/src/**/", "packages/*/src/**/"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: two test files at a time keeps the suite fast without starving the peers.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // test/: checks of the repository itself (the end-to-end tests there are excluded below).
          include: [...SOURCES.map((s) => `${s}*.test.ts`), "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", "**/*.int.test.ts", "**/*.e2e.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          // test/*.int.test.ts: the deployment material (infra/) against its real tools (promtool).
          include: [...SOURCES.map((s) => `${s}*.int.test.ts`), "test/**/*.int.test.ts"],
          globalSetup: [...DATABASE_SETUP, S3_SETUP],
        },
      },
      {
        extends: true,
        // The browser tests (test/web*.e2e.test.ts) need the web UI built: the last setup builds it when stale.
        test: {
          name: "e2e",
          include: ["test/**/*.e2e.test.ts"],
          globalSetup: [...DATABASE_SETUP, S3_SETUP, "test/web-global-setup.ts"],
        },
      },
    ],
  },
});
