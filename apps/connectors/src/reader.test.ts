import { describe, expect, it } from "vitest";
import { HubApiError, HubUnavailableError } from "@fm/clients";
import { hubErrorClass } from "./reader.ts";

describe("hubErrorClass: a failed read's class, from the clients' status table", () => {
  it.each([
    [401, "hub_unauthorized"],
    [403, "hub_unauthorized"],
    [429, "hub_unavailable"],
    [500, "hub_unavailable"],
    [503, "hub_unavailable"],
    [400, "internal"],
    [404, "internal"],
    [409, "internal"],
  ])("a hub %i is %s", (status, errorClass) => {
    expect(hubErrorClass(new HubApiError(status, undefined, `hub ${status}`))).toBe(errorClass);
  });

  it("no answer is the hub unavailable", () => {
    expect(hubErrorClass(new HubUnavailableError("GET /v1/feed: the hub did not answer after 4 attempt(s)", 4))).toBe(
      "hub_unavailable",
    );
  });
});
