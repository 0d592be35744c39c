import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["apps/*/src/**/*.test.ts", "packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: two test files at a time keeps the suite fast without starving the peers.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"],
  },
});
