/**
 * Heartbeats (`POST /api/v1/satellites/{name}/agents/{agent}/heartbeat`) carry each loop's age,
 * shown by `GET /api/v1/satellites/{name}/`. A failed heartbeat is logged and tried again at the
 * next interval: it never stops the agent.
 */
import type { Logger } from "pino";
import type { HubClient } from "@fm/clients";
import type { AgentKind } from "@fm/domain";
import { sleep } from "./backoff.ts";
import { describeError } from "./log.ts";
import type { Loop } from "./loop.ts";

export interface Heartbeat {
  hub: HubClient;
  kind: AgentKind;
  satellite: string;
  loops: readonly Loop[];
  log: Logger;
}

/** Until the signal aborts, every `intervalMs`. */
export async function heartbeats(h: Heartbeat, intervalMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await sendHeartbeat(h).catch((err: unknown) => h.log.warn({ err: describeError(err) }, "heartbeat failed"));
    await sleep(intervalMs, signal);
  }
}

export function sendHeartbeat({ hub, kind, satellite, loops, log }: Heartbeat): Promise<void> {
  // The hub's contract calls them reflectors: every loop's age, controllers' too.
  const ages = Object.fromEntries(loops.map((l) => [l.store, Math.round(l.ageSeconds() * 10) / 10]));
  log.debug({ reflectors: ages }, "heartbeat");
  return hub.heartbeat(satellite, kind, { reflectors: ages });
}
