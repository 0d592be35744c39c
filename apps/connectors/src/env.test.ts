import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./env.ts";

const base = {
  CONNECTOR_NAME: "matrix-prod",
  CONNECTOR_DATABASE_URL: "postgres://c@db/matrix",
  CONNECTOR_SITES: "sin1, wdc1",
  FM_HUB_URL: "https://api.fleet.example/",
  FM_CLIENT_ID: "matrix-prod",
  FM_CLIENT_SECRET_FILE: "/secrets/hub",
  CONNECTOR_SINK: "webhook",
  WEBHOOK_URL: "https://hooks.example/fleet",
  WEBHOOK_SECRET_FILE: "/secrets/webhook",
};

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
};

describe("connector configuration", () => {
  it("parses the sites and trims the hub URL", () => {
    const c = loadConfig(base);
    expect(c.CONNECTOR_SITES).toEqual(["sin1", "wdc1"]);
    expect(c.FM_HUB_URL).toBe("https://api.fleet.example");
    expect(c.CONNECTOR_BATCH_SIZE).toBe(500);
  });

  it("names every variable the Kusto sink needs, and never echoes a value", () => {
    const out = problems({ ...base, CONNECTOR_SINK: "kusto", FM_CLIENT_ID: "s3cr3t-looking" });
    expect(out.map((p) => p.split(":")[0])).toEqual([
      "KUSTO_CLUSTER_URL",
      "KUSTO_DATABASE",
      "KUSTO_TABLE",
      "KUSTO_MAPPING_NAME",
      "ENTRA_TENANT_ID",
      "ENTRA_CLIENT_ID",
      "ENTRA_CLIENT_SECRET_FILE",
    ]);
    expect(out.join("\n")).not.toContain("s3cr3t");
    // A bad value is named by its variable, never echoed (the required ones are already covered).
    const bad = problems({
      ...base,
      FM_HUB_URL: "s3cr3t-hub",
      CONNECTOR_BATCH_SIZE: "s3cr3t-size",
      CONNECTOR_SINK: "s3cr3t-sink",
      LOG_LEVEL: "s3cr3t-level",
    });
    expect(bad.map((p) => p.split(":")[0]).sort()).toEqual([
      "CONNECTOR_BATCH_SIZE",
      "CONNECTOR_SINK",
      "FM_HUB_URL",
      "LOG_LEVEL",
    ]);
    expect(bad.join("\n")).not.toContain("s3cr3t");
  });

  it("refuses a bad site slug, a page over 1000 and a wait over 60 s", () => {
    expect(problems({ ...base, CONNECTOR_SITES: "Sin 1" })[0]).toMatch(/^CONNECTOR_SITES/);
    expect(problems({ ...base, CONNECTOR_FEED_PAGE_SIZE: "5000" })).toEqual(["CONNECTOR_FEED_PAGE_SIZE: at most 1000"]);
    expect(problems({ ...base, CONNECTOR_FEED_WAIT_S: "61" })).toEqual(["CONNECTOR_FEED_WAIT_S: at most 60"]);
    // Only over: the limits themselves are taken.
    expect(problems({ ...base, CONNECTOR_FEED_PAGE_SIZE: "1001" })).toEqual(["CONNECTOR_FEED_PAGE_SIZE: at most 1000"]);
    expect(problems({ ...base, CONNECTOR_FEED_PAGE_SIZE: "1000", CONNECTOR_FEED_WAIT_S: "60" })).toEqual([]);
  });
});
