/** Durations as people write them on a command line: `90s`, `30m`, `2h`, `1h30m`, `500ms`, or seconds. */
import { UsageError } from "./errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string, flag: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join("") !== t)
    throw new UsageError(`${flag} ${JSON.stringify(text)} is not a duration`, "write it as 90s, 30m, 2h or 1h30m");
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
}
