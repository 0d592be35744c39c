import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.ts";
import { parseScopeOption } from "./scopes.ts";
import { renderError, UsageError } from "./errors.ts";
import { exitForStatus } from "./exit-codes.ts";

describe("parseScopeOption", () => {
  it("maps the levels people name to the hub's scopes", () => {
    expect(parseScopeOption("read-only")).toEqual(["fleet.read"]);
    expect(parseScopeOption("operate")).toEqual(["fleet.operate"]);
    expect(parseScopeOption("fleet.read,fleet.admin")).toEqual(["fleet.read", "fleet.admin"]);
    expect(parseScopeOption(undefined)).toBeUndefined();
  });
  it("refuses anything else", () => {
    expect(() => parseScopeOption("root")).toThrow(UsageError);
    expect(() => parseScopeOption(" ")).toThrow(/empty/);
  });
});

describe("parseDuration", () => {
  it("reads seconds, units and compounds", () => {
    expect(parseDuration("90", "--t")).toBe(90_000);
    expect(parseDuration("500ms", "--t")).toBe(500);
    expect(parseDuration("1h30m", "--t")).toBe(5_400_000);
  });
  it("refuses what is not a duration", () => {
    expect(() => parseDuration("soon", "--timeout")).toThrow(/--timeout "soon" is not a duration/);
    expect(() => parseDuration("5x", "--timeout")).toThrow(UsageError);
  });
});

describe("errors and exit codes", () => {
  it("a problem shows title, status, code, detail, fields and the request id", () => {
    const err = Object.assign(new Error("PATCH … -> 400"), {
      name: "HubApiError",
      status: 400,
      problem: {
        title: "Bad Request",
        status: 400,
        detail: "The request is invalid",
        code: "validation_failed",
        requestId: "req-1",
        errors: [{ path: "body.cordonReason", message: "required" }],
      },
    });
    expect(renderError(err)).toEqual({
      text: "error: Bad Request (400 validation_failed): The request is invalid\n  body.cordonReason: required\nrequest id: req-1\n",
      exitCode: 2,
    });
  });
  it("statuses map to the documented codes", () => {
    expect([404, 401, 403, 409, 412, 422, 500, 503].map(exitForStatus)).toEqual([3, 4, 4, 5, 5, 5, 1, 1]);
  });
  it("a usage error exits 2 with its hint", () => {
    expect(renderError(new UsageError("bad", "do this"))).toEqual({ text: "error: bad\nhint: do this\n", exitCode: 2 });
  });
});
