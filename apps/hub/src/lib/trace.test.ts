import { describe, expect, it } from "vitest";
import { newTraceId, traceIdOf, traceIdOfTraceparent } from "./trace.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

describe("traceparent", () => {
  it.each([
    [`00-${TRACE}-00f067aa0ba902b7-01`, TRACE],
    [`00-${TRACE}-00f067aa0ba902b7-00`, TRACE],
    // A later version may carry more fields; its first four are read.
    [`01-${TRACE}-00f067aa0ba902b7-01-extra`, TRACE],
    [`00-${TRACE}-00f067aa0ba902b7-01-extra`, undefined],
    [`ff-${TRACE}-00f067aa0ba902b7-01`, undefined],
    [`00-${"0".repeat(32)}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE}-${"0".repeat(16)}-01`, undefined],
    [`00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE}-00f067aa0ba902b7`, undefined],
    ["garbage", undefined],
    [undefined, undefined],
  ])("%s → %s", (header, want) => {
    expect(traceIdOfTraceparent(header)).toBe(want);
  });

  it("a request keeps one trace id: the caller's, or one made for it", () => {
    const given = { headers: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` } };
    expect(traceIdOf(given)).toBe(TRACE);
    const none = { headers: {} };
    expect(traceIdOf(none)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(none)).toBe(traceIdOf(none));
    expect(traceIdOf({ headers: {} })).not.toBe(traceIdOf(none));
    expect(newTraceId()).toMatch(/^[0-9a-f]{32}$/);
  });
});
