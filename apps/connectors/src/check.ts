/**
 * The operator health check of a connector instance, read from its database (the durable
 * truth, available when the process is not): whether it is within its freshness SLA, its feed
 * lag, its last error class and its dead letters. Pure assessment here; ./check-cli.ts prints it.
 */
import type { CursorState, QueueStats } from "./queue/store.ts";

export interface CheckInput {
  connector: string;
  slaS: number;
  state: CursorState | undefined;
  /** Seconds since the cursor row was last written (a page, even an empty long-poll, writes it). */
  sinceUpdateS: number | undefined;
  stats: QueueStats;
  deadLetters: { recordId: string; resourceKey: string; reason: string; deadAt: Date }[];
}

export interface CheckResult {
  ok: boolean;
  lines: string[];
}

export function assess(i: CheckInput): CheckResult {
  const breaches: string[] = [];
  if (!i.state) breaches.push("has never read the feed (no cursor)");
  if (i.stats.oldestUndeliveredAgeS > i.slaS)
    breaches.push(`oldest undelivered change is ${fmt(i.stats.oldestUndeliveredAgeS)} old`);
  const lagEvents = i.state ? Number(BigInt(i.state.head) - BigInt(i.state.position)) : 0;
  const lagS = i.state && lagEvents > 0 ? (Date.now() - i.state.caughtUpAt.getTime()) / 1000 : 0;
  if (lagS > i.slaS) breaches.push(`feed reading ${fmt(lagS)} behind the hub`);
  if (i.sinceUpdateS !== undefined && i.sinceUpdateS > i.slaS)
    breaches.push(`has not read the feed for ${fmt(i.sinceUpdateS)} (process down, or the hub unreachable)`);
  const ok = breaches.length === 0;
  const lines = [
    `connector ${i.connector}: ${ok ? "WITHIN SLA" : "SLA BREACH"} (freshness objective ${fmt(i.slaS)})`,
    ...breaches.map((b) => `  breach: ${b}`),
    `  queue: ${i.stats.undelivered} undelivered, oldest ${fmt(i.stats.oldestUndeliveredAgeS)}`,
    i.state
      ? `  feed: cursor ${i.state.position}, head ${i.state.head}, lag ${lagEvents} events / ${fmt(lagS)}` +
        (i.state.snapshotPosition ? `, last snapshot at ${i.state.snapshotPosition}` : "")
      : "  feed: no cursor yet",
    i.state?.lastErrorClass
      ? `  last error: ${i.state.lastErrorClass} at ${i.state.lastErrorAt?.toISOString()}`
      : "  last error: none",
    `  dead letters: ${i.stats.deadLetters}`,
    ...i.deadLetters.map((d) => `    ${d.deadAt.toISOString()} ${d.resourceKey} ${d.recordId}: ${d.reason}`),
  ];
  return { ok, lines };
}

function fmt(s: number): string {
  return s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`;
}
