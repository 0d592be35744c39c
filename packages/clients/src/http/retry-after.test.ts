import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER_CAP_MS, retryAfterMs } from "./retry-after.ts";

const NOW = Date.parse("2026-12-03T10:00:00.000Z");

describe("retryAfterMs", () => {
  it.each([
    ["delay-seconds", "7", 7000],
    ["delay-seconds with spaces around", " 2 ", 2000],
    ["zero", "0", 0],
    ["fractional seconds (lenient, as before)", "1.5", 1500],
    ["an IMF-fixdate", "Thu, 03 Dec 2026 10:00:20 GMT", 20_000],
    ["an RFC 850 date", "Thursday, 03-Dec-26 10:00:05 GMT", 5000],
    ["an asctime date", "Thu Dec  3 10:00:10 2026", 10_000],
    ["an HTTP-date already past", "Thu, 03 Dec 2026 09:59:00 GMT", 0],
    ["delay-seconds longer than the cap", "3600", DEFAULT_RETRY_AFTER_CAP_MS],
    ["an HTTP-date later than the cap", "Thu, 03 Dec 2026 11:00:00 GMT", DEFAULT_RETRY_AFTER_CAP_MS],
    ["absent", null, undefined],
    ["undefined", undefined, undefined],
    ["empty", "", undefined],
    ["blank", "   ", undefined],
    ["negative", "-5", undefined],
    ["negative fraction", "-0.5", undefined],
    ["a number with a unit", "5s", undefined],
    ["exponent notation", "1e3", undefined],
    ["unreadable", "soon", undefined],
    ["a day name and nonsense", "Thu, never", undefined],
  ])("reads %s", (_, header, ms) => {
    expect(retryAfterMs(header, DEFAULT_RETRY_AFTER_CAP_MS, NOW)).toBe(ms);
  });

  it("takes the caller's cap", () => {
    expect(retryAfterMs("3600", 120_000, NOW)).toBe(120_000);
    expect(retryAfterMs("Thu, 03 Dec 2026 10:01:00 GMT", 120_000, NOW)).toBe(60_000);
  });
});
