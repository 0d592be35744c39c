import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HubApiError } from "@fm/clients";
import { FatalSetupError, withRetries } from "./setup-retry.ts";

const log = pino({ level: "silent" });
const config = { FM_MAX_CONSECUTIVE_FAILURES: 3, FM_BACKOFF_BASE_MS: 1, FM_BACKOFF_MAX_S: 1 };

/** Calls of a step that throws `err` until it has failed `failures` times. */
async function attempts(err: Error, failures = 10): Promise<{ calls: number; outcome: unknown }> {
  let calls = 0;
  const outcome = await withRetries(config, log, new AbortController().signal, "step", async () => {
    if (++calls <= failures) throw err;
    return "done";
  }).catch((e: unknown) => e);
  return { calls, outcome };
}

describe("withRetries: what the setup gives up on at once", () => {
  it.each([400, 403, 404, 422])("a hub %i is final: one call", async (status) => {
    const err = new HubApiError(status, undefined, `hub ${status}`);
    expect(await attempts(err)).toEqual({ calls: 1, outcome: err });
  });

  it.each([401, 409, 429, 503])("a hub %i is retried, then succeeds", async (status) => {
    expect(await attempts(new HubApiError(status, undefined, `hub ${status}`), 2)).toEqual({
      calls: 3,
      outcome: "done",
    });
  });

  it("gives up after FM_MAX_CONSECUTIVE_FAILURES of what it retries", async () => {
    const err = new HubApiError(409, undefined, "hub 409");
    expect(await attempts(err)).toEqual({ calls: 3, outcome: err });
  });

  it("a FatalSetupError is final", async () => {
    const err = new FatalSetupError("unknown site");
    expect(await attempts(err)).toEqual({ calls: 1, outcome: err });
  });
});
