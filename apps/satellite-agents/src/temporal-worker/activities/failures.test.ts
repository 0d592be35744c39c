import { describe, expect, it } from "vitest";
import { ApplicationFailure } from "@temporalio/activity";
import {
  HubApiError,
  IronicApiError,
  NetboxApiError,
  NetboxAuthenticationError,
  NetboxPermissionError,
  NovaApiError,
  PrometheusApiError,
  SlurmApiError,
  IronicUnavailableError,
} from "@fm/clients";
import { isFinal } from "./failures.ts";

/** One error of each source for a status. */
const errorsFor = (status: number) => [
  new IronicApiError(status, "", `ironic ${status}`),
  new NetboxApiError(status, "", `netbox ${status}`),
  new HubApiError(status, undefined, `hub ${status}`),
  new SlurmApiError(status, [], `slurm ${status}`),
  new NovaApiError(status, undefined, `nova ${status}`),
  new PrometheusApiError(status, null, `prometheus ${status}`),
];

describe("isFinal: the worker reads the clients' status table", () => {
  it.each([400, 403, 404, 422])("a %i from any source is final", (status) => {
    for (const err of errorsFor(status)) expect([err.name, isFinal(err)]).toEqual([err.name, true]);
  });

  it.each([401, 409, 429, 500, 503])("a %i from any source is retried by Temporal", (status) => {
    for (const err of errorsFor(status)) expect([err.name, isFinal(err)]).toEqual([err.name, false]);
  });

  it("an unexpected body with a 200 is retried, as before", () => {
    expect(isFinal(new IronicApiError(200, "{}", "GET /v1/nodes -> 200 with an unexpected body"))).toBe(false);
  });

  it("NetBox's bad token (403) is retried, a missing permission is final", () => {
    expect(isFinal(new NetboxAuthenticationError(403, "", "Invalid v1 token"))).toBe(false);
    expect(isFinal(new NetboxPermissionError(403, "", "no permission", "dcim.device", "/api/dcim/devices/"))).toBe(
      true,
    );
  });

  it("no answer is retried; a non-retryable ApplicationFailure stays final", () => {
    expect(isFinal(new IronicUnavailableError("Ironic did not answer", 4))).toBe(false);
    expect(isFinal(ApplicationFailure.nonRetryable("bad", "BadInput"))).toBe(true);
    expect(isFinal(new Error("anything else"))).toBe(false);
  });
});
