/**
 * Exponential backoff with "equal jitter", the one formula of every retry here (the clients'
 * own loops, the agents' loops and setup, the connector): the n-th retry waits between half and
 * all of base·2^(n-1), capped. Half the delay is guaranteed, so a failing source is not
 * hammered; the random half spreads the agents of many sites that failed together (a hub
 * restart).
 */
export function backoffDelay(
  failures: number,
  baseMs: number,
  maxMs: number = Number.POSITIVE_INFINITY,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
