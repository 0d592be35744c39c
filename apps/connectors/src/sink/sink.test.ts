import { describe, expect, it } from "vitest";
import { retryAfter } from "./sink.ts";

const NOW = Date.parse("2026-12-03T10:00:00.000Z");

describe("Retry-After", () => {
  it.each([
    ["delay-seconds", "7", 7000],
    ["an HTTP-date", "Thu, 03 Dec 2026 10:00:30 GMT", 30_000],
    ["an HTTP-date already past", "Thu, 03 Dec 2026 09:59:00 GMT", 0],
    ["longer than the cap", "3600", 120_000],
    ["absent", null, undefined],
    ["empty", "", undefined],
    ["negative", "-5", undefined],
    ["unreadable", "soon", undefined],
  ])("reads %s", (_, header, ms) => {
    expect(retryAfter(header, 120_000, NOW)).toBe(ms);
  });
});
