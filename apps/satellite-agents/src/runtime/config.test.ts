import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, loadConfig, satelliteName } from "./config.ts";

const base = {
  FM_HUB_URL: "http://hub:8080/",
  FM_CLIENT_ID: "ironic-agent-sys1-ice2",
  FM_CLIENT_SECRET: "s3cret-value",
  FM_SITE: "keflavik",
};

describe("agent configuration", () => {
  it("applies the contract's defaults and derives the satellite from the client id", () => {
    const c = loadConfig({}, base);
    expect(c).toMatchObject({
      FM_HUB_URL: "http://hub:8080",
      METRICS_PORT: 9464,
      FM_REFLECT_INTERVAL_S: 30,
      FM_MAX_CONSECUTIVE_FAILURES: 10,
    });
    expect(satelliteName("openstack", c)).toBe("sys1-ice2");
    expect(satelliteName("openstack", loadConfig({}, { ...base, FM_SATELLITE: "other" }))).toBe("other");
  });

  it("names every bad variable and never echoes a value", () => {
    let error: unknown;
    try {
      loadConfig(
        { EXTRA: z.coerce.number().int() },
        {
          ...base,
          FM_HUB_URL: "not a url",
          FM_SITE: "Bad Slug",
          METRICS_PORT: "99999",
          EXTRA: "x",
          FM_CLIENT_SECRET: "",
        },
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const v of ["FM_HUB_URL", "FM_SITE", "METRICS_PORT", "EXTRA", "FM_CLIENT_SECRET"])
      expect(message).toContain(v);
    for (const value of ["not a url", "Bad Slug", "99999"]) expect(message).not.toContain(value);
    expect(() => satelliteName("slurm", loadConfig({}, base))).toThrow(/FM_SATELLITE/);
  });
});
