import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "./env.ts";

describe("hub environment", () => {
  it("has defaults that run the quick start", () => {
    const env = parseEnv({});
    expect(env).toMatchObject({ PORT: 8080, HOST: "127.0.0.1", FM_MIGRATE_ON_START: true, FM_BODY_LIMIT_BYTES: 16 * 1024 * 1024 });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.FM_DATA_DIR).toMatch(/^\/.*\.data$/);
  });

  it("parses given values", () => {
    const env = parseEnv({ PORT: "9000", DATABASE_URL: "postgres://u@h:5432/d", FM_MIGRATE_ON_START: "false", FM_BODY_LIMIT_BYTES: "2048" });
    expect(env).toMatchObject({ PORT: 9000, DATABASE_URL: "postgres://u@h:5432/d", FM_MIGRATE_ON_START: false, FM_BODY_LIMIT_BYTES: 2048 });
  });

  it("names every bad variable", () => {
    let error: unknown;
    try {
      parseEnv({ PORT: "eighty", FM_DB_POOL_MAX: "0", LOG_LEVEL: "loud" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EnvError);
    const message = (error as Error).message;
    expect(message).toContain("PORT");
    expect(message).toContain("FM_DB_POOL_MAX");
    expect(message).toContain("LOG_LEVEL");
  });
});
