import { describe, expect, it } from "vitest";
import { isOutage, statusClass, type SourceName, type StatusClass } from "./status.ts";

/** Every source: a Record over SourceName, so a source added to the type and not here fails to compile. */
const EVERY_SOURCE: Record<SourceName, true> = {
  hub: true,
  ironic: true,
  nova: true,
  netbox: true,
  slurm: true,
  prometheus: true,
  keystone: true,
  oauth: true,
};
const SOURCES = Object.keys(EVERY_SOURCE) as SourceName[];

describe("statusClass: the one table", () => {
  it.each<[number, StatusClass, boolean]>([
    [200, "ok", false],
    [201, "ok", false],
    [202, "ok", false],
    [204, "ok", false],
    [100, "final", false],
    [302, "final", false],
    [304, "final", false],
    [400, "final", false],
    [401, "auth", false],
    [403, "final", false],
    [404, "final", false],
    [405, "final", false],
    [408, "final", false],
    [409, "retry", false],
    [410, "final", false],
    [412, "final", false],
    [422, "final", false],
    [429, "retry", true],
    [500, "retry", true],
    [502, "retry", true],
    [503, "retry", true],
    [504, "retry", true],
    [599, "retry", true],
    [600, "final", false],
  ])("%i (default column) is %s, outage %s", (status, cls, outage) => {
    expect(statusClass(status)).toBe(cls);
    expect(isOutage(status)).toBe(outage);
  });

  it("409 is decided once: retry, on the caller's schedule, for every source", () => {
    for (const source of SOURCES) {
      expect(statusClass(409, source)).toBe("retry");
      expect(isOutage(409, source)).toBe(false);
    }
  });

  it("401 is auth and 403 final for every source (NetBox's bad-token 403 is told by its error class)", () => {
    for (const source of SOURCES) {
      expect(statusClass(401, source)).toBe("auth");
      expect(statusClass(403, source)).toBe("final");
    }
  });

  it("429 and the gateway 5xx are outages for every source", () => {
    for (const source of SOURCES)
      for (const status of [429, 502, 503, 504]) expect([source, isOutage(status, source)]).toEqual([source, true]);
  });

  it.each<SourceName>(["prometheus", "slurm"])("%s: a 500 is a request it cannot run, not an outage", (source) => {
    for (const status of [500, 501, 505, 507]) {
      expect(statusClass(status, source)).toBe("retry");
      expect(isOutage(status, source)).toBe(false);
    }
  });

  it.each<SourceName>(["hub", "ironic", "nova", "netbox", "keystone", "oauth"])(
    "%s: every 5xx is an outage",
    (source) => {
      for (const status of [500, 501, 502, 503, 504, 505, 511]) expect(isOutage(status, source)).toBe(true);
    },
  );
});
