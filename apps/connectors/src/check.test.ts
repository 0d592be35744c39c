import { describe, expect, it } from "vitest";
import { assess } from "./check.ts";

const state = (over = {}) => ({
  position: "100",
  head: "100",
  caughtUpAt: new Date(),
  snapshotPosition: "10",
  lastErrorClass: null,
  lastErrorAt: null,
  ...over,
});
const stats = (over = {}) => ({ undelivered: 0, oldestUndeliveredAgeS: 0, deadLetters: 0, ...over });

describe("the operator check", () => {
  it("is within the SLA when the queue is fresh and the feed read", () => {
    const r = assess({
      connector: "matrix-prod",
      slaS: 300,
      state: state(),
      sinceUpdateS: 5,
      stats: stats(),
      deadLetters: [],
    });
    expect(r.ok).toBe(true);
    expect(r.lines[0]).toBe("connector matrix-prod: WITHIN SLA (freshness objective 5 min)");
    expect(r.lines).toContain("  last error: none");
  });

  it("breaches when the oldest undelivered change is older than the SLA, and shows why", () => {
    const at = new Date("2026-11-02T10:00:00.000Z");
    const r = assess({
      connector: "matrix-prod",
      slaS: 300,
      state: state({ lastErrorClass: "sink_unavailable", lastErrorAt: at }),
      sinceUpdateS: 5,
      stats: stats({ undelivered: 40, oldestUndeliveredAgeS: 420, deadLetters: 1 }),
      deadLetters: [
        { recordId: "matrix-prod:7:device:d1", resourceKey: "device:d1", reason: "400 BadRequest", deadAt: at },
      ],
    });
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual(
      expect.arrayContaining([
        "connector matrix-prod: SLA BREACH (freshness objective 5 min)",
        "  breach: oldest undelivered change is 7 min old",
        "  last error: sink_unavailable at 2026-11-02T10:00:00.000Z",
        "  dead letters: 1",
        "    2026-11-02T10:00:00.000Z device:d1 matrix-prod:7:device:d1: 400 BadRequest",
      ]),
    );
  });

  it("breaches when the instance has stopped reading the feed or never started", () => {
    const since = (sinceUpdateS: number) =>
      assess({ connector: "c", slaS: 300, state: state(), sinceUpdateS, stats: stats(), deadLetters: [] });
    // Not before the objective has passed without a read, and from just after it.
    expect(since(300).ok).toBe(true);
    expect(since(301).ok).toBe(false);
    expect(since(301).lines).toContain(
      "  breach: has not read the feed for 5 min (process down, or the hub unreachable)",
    );
    expect(since(900).ok).toBe(false);
    expect(
      assess({ connector: "c", slaS: 300, state: undefined, sinceUpdateS: undefined, stats: stats(), deadLetters: [] })
        .lines[1],
    ).toBe("  breach: has never read the feed (no cursor)");
  });
});
