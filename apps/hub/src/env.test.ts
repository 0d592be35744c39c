import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "./env.ts";

describe("hub environment", () => {
  it("has defaults that run the quick start", () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      PORT: 8080,
      HOST: "127.0.0.1",
      FM_MIGRATE_ON_START: true,
      FM_BODY_LIMIT_BYTES: 16 * 1024 * 1024,
    });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.FM_DATA_DIR).toMatch(/^\/.*\.data$/);
  });

  it("parses given values", () => {
    const env = parseEnv({
      PORT: "9000",
      DATABASE_URL: "postgres://u@h:5432/d",
      FM_MIGRATE_ON_START: "false",
      FM_BODY_LIMIT_BYTES: "2048",
    });
    expect(env).toMatchObject({
      PORT: 9000,
      DATABASE_URL: "postgres://u@h:5432/d",
      FM_MIGRATE_ON_START: false,
      FM_BODY_LIMIT_BYTES: 2048,
    });
  });

  it("parses the identity settings and refuses FM_AUTH=none off loopback", () => {
    const env = parseEnv({
      FM_EXPECTED_SATELLITES: '[{"name":"sys1-ice2","sites":["keflavik"],"environment":"prod"}]',
      FM_OIDC_SCOPE_MAPPING: '{"groups":{"ops":["fleet.operate"]}}',
    });
    expect(env.FM_EXPECTED_SATELLITES).toEqual([{ name: "sys1-ice2", sites: ["keflavik"], environment: "prod" }]);
    expect(env.FM_OIDC_SCOPE_MAPPING).toEqual({ groups: { ops: ["fleet.operate"] } });
    expect(() => parseEnv({ FM_AUTH: "none", HOST: "0.0.0.0" })).toThrow(/FM_AUTH/);
    expect(parseEnv({ FM_AUTH: "none" }).FM_AUTH).toBe("none");
    expect(() => parseEnv({ FM_EXPECTED_SATELLITES: "[{name:" })).toThrow(/FM_EXPECTED_SATELLITES/);
    expect(() => parseEnv({ FM_KEY_ENCRYPTION_KEY: "c2hvcnQ=" })).toThrow(/FM_KEY_ENCRYPTION_KEY/);
    expect(() => parseEnv({ FM_BOOTSTRAP_ADMIN_SECRET: "short" })).toThrow(/FM_BOOTSTRAP_ADMIN_SECRET/);
  });

  it("judges a site silent after 10 minutes, the staleness window, unless FM_SITE_SILENCE_AFTER_S says otherwise", () => {
    expect(parseEnv({})).toMatchObject({ FM_SITE_SILENCE_AFTER_S: 600, FM_STALE_AFTER_S: 600 });
    expect(parseEnv({ FM_SITE_SILENCE_AFTER_S: "120" }).FM_SITE_SILENCE_AFTER_S).toBe(120);
    expect(() => parseEnv({ FM_SITE_SILENCE_AFTER_S: "5" })).toThrow(/FM_SITE_SILENCE_AFTER_S/);
    expect(() => parseEnv({ FM_SITE_SILENCE_AFTER_S: "15m" })).toThrow(/FM_SITE_SILENCE_AFTER_S/);
  });

  it("refuses to start with a silence window longer than the staleness window, naming both; equal is allowed", () => {
    expect(() => parseEnv({ FM_SITE_SILENCE_AFTER_S: "601" })).toThrow(
      /FM_SITE_SILENCE_AFTER_S: must be at most FM_STALE_AFTER_S: a site silence window of 601 s is longer than the staleness window \(600 s\)/,
    );
    expect(() => parseEnv({ FM_STALE_AFTER_S: "300" })).toThrow(
      /FM_SITE_SILENCE_AFTER_S: must be at most FM_STALE_AFTER_S/,
    );
    expect(parseEnv({ FM_SITE_SILENCE_AFTER_S: "300", FM_STALE_AFTER_S: "300" }).FM_SITE_SILENCE_AFTER_S).toBe(300);
    expect(parseEnv({ FM_SITE_SILENCE_AFTER_S: "900", FM_STALE_AFTER_S: "900" }).FM_STALE_AFTER_S).toBe(900);
  });

  it("keeps feed events a week unless FM_FEED_RETENTION_S says otherwise, never less than two snapshot timeouts", () => {
    expect(parseEnv({})).toMatchObject({ FM_FEED_RETENTION_S: 604800, FM_FEED_SNAPSHOT_TIMEOUT_S: 600 });
    expect(parseEnv({ FM_FEED_RETENTION_S: "86400" }).FM_FEED_RETENTION_S).toBe(86400);
    expect(() => parseEnv({ FM_FEED_RETENTION_S: "600" })).toThrow(
      /FM_FEED_RETENTION_S: must be at least twice FM_FEED_SNAPSHOT_TIMEOUT_S \(600 s\)/,
    );
    // Exactly twice is enough; a second less is not.
    expect(parseEnv({ FM_FEED_RETENTION_S: "60", FM_FEED_SNAPSHOT_TIMEOUT_S: "30" }).FM_FEED_RETENTION_S).toBe(60);
    expect(() => parseEnv({ FM_FEED_RETENTION_S: "61", FM_FEED_SNAPSHOT_TIMEOUT_S: "31" })).toThrow(
      /FM_FEED_RETENTION_S: must be at least twice FM_FEED_SNAPSHOT_TIMEOUT_S \(31 s\)/,
    );
    expect(() => parseEnv({ FM_FEED_RETENTION_S: "1199" })).toThrow(/at least twice FM_FEED_SNAPSHOT_TIMEOUT_S/);
    expect(parseEnv({ FM_FEED_RETENTION_S: "1200" }).FM_FEED_RETENTION_S).toBe(1200);
  });

  it("expects satellites in the environments the rollout guide names: dev, stg, prod", () => {
    const declared = (environment: string) =>
      parseEnv({ FM_EXPECTED_SATELLITES: JSON.stringify([{ name: "sys1-ice2", sites: ["keflavik"], environment }]) });
    for (const environment of ["dev", "stg", "prod"])
      expect(declared(environment).FM_EXPECTED_SATELLITES).toEqual([
        { name: "sys1-ice2", sites: ["keflavik"], environment },
      ]);
    expect(() => declared("staging")).toThrow(/FM_EXPECTED_SATELLITES/);
  });

  it("refuses NetBox filters that list a site twice, naming the variable (the hub would fail creating it twice)", () => {
    const filters = (sites: string[]) =>
      parseEnv({ FM_NETBOX_DEVICE_FILTERS: JSON.stringify(sites.map((site) => ({ site, clusters: ["c1"] }))) });
    expect(filters(["iad1", "fra9"]).FM_NETBOX_DEVICE_FILTERS.map((f) => f.site)).toEqual(["iad1", "fra9"]);
    expect(() => filters(["iad1", "iad1"])).toThrow(/FM_NETBOX_DEVICE_FILTERS/);
  });

  it("times out slow requests, caps connections and trusts no proxy unless told (FM_REQUEST_TIMEOUT_S, FM_MAX_CONNECTIONS*, FM_TRUST_PROXY)", () => {
    expect(parseEnv({})).toMatchObject({
      FM_REQUEST_TIMEOUT_S: 30,
      FM_REFLECTION_REQUEST_TIMEOUT_S: 600,
      FM_MAX_CONNECTIONS: 4096,
      FM_MAX_CONNECTIONS_PER_ADDRESS: 256,
      FM_TRUST_PROXY: [],
    });
    expect(parseEnv({ FM_TRUST_PROXY: "10.0.0.0/8, fd00::/8,192.0.2.7" }).FM_TRUST_PROXY).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
      "192.0.2.7",
    ]);
    for (const bad of ["10.0.0.0/33", "ingress", "10.0.0.1/8/2", "fd00::/129", "10.0.0/8"])
      expect(() => parseEnv({ FM_TRUST_PROXY: bad }), bad).toThrow(/FM_TRUST_PROXY/);
    expect(() => parseEnv({ FM_REQUEST_TIMEOUT_S: "0" })).toThrow(/FM_REQUEST_TIMEOUT_S/);
    expect(() => parseEnv({ FM_REQUEST_TIMEOUT_S: "60", FM_REFLECTION_REQUEST_TIMEOUT_S: "30" })).toThrow(
      /FM_REFLECTION_REQUEST_TIMEOUT_S: must be at least FM_REQUEST_TIMEOUT_S/,
    );
    expect(() => parseEnv({ FM_MAX_CONNECTIONS: "100", FM_MAX_CONNECTIONS_PER_ADDRESS: "101" })).toThrow(
      /FM_MAX_CONNECTIONS_PER_ADDRESS: must be at most FM_MAX_CONNECTIONS/,
    );
    expect(() => parseEnv({ FM_MAX_CONNECTIONS: "lots" })).toThrow(/FM_MAX_CONNECTIONS/);
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
