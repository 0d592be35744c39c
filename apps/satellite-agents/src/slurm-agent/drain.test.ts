import { describe, expect, it } from "vitest";
import { SlurmClient } from "@fm/clients";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { slurmDrainer } from "./agent.ts";

const config = (over: Record<string, unknown> = {}) =>
  ({
    SLURM_URL: "http://slurm.test:6820",
    SLURM_API_VERSION: "v0.0.38",
    SLURM_USER: "hpcadmin",
    SLURM_TOKEN_FILE: "/nonexistent/jwt",
    SLURM_DEVICE_NAME_PREFIX: "",
    SLURM_DRAIN_VIA: "auto",
    SLURM_SCONTROL: "scontrol",
    FM_CORDON_SYNC: true,
    FM_HTTP_TIMEOUT_MS: 5000,
    ...over,
  }) as Parameters<typeof slurmDrainer>[0];
const client = (apiVersion: string, fetch?: typeof globalThis.fetch) =>
  new SlurmClient({ baseUrl: "http://slurm.test:6820", apiVersion, user: "hpcadmin", token: () => "jwt", fetch });

describe("slurmDrainer", () => {
  it("drains through slurmrestd from v0.0.40 on, through scontrol before, unless told", () => {
    expect(slurmDrainer(config(), client("v0.0.38")).via).toBe("scontrol");
    expect(slurmDrainer(config(), client("v0.0.43")).via).toBe("rest");
    expect(slurmDrainer(config({ SLURM_DRAIN_VIA: "scontrol" }), client("v0.0.43")).via).toBe("scontrol");
  });

  it("refuses REST drains on an API version that has no node update, at start", () => {
    expect(() => slurmDrainer(config({ SLURM_DRAIN_VIA: "rest" }), client("v0.0.38"))).toThrow(FatalSetupError);
  });

  it("the REST drainer sends DRAIN with the reason and UNDRAIN to the node's update route", async () => {
    const calls: [string, unknown][] = [];
    const fetch = (async (url: string | URL, init?: RequestInit) => {
      calls.push([String(url), JSON.parse(String(init?.body))]);
      return new Response(JSON.stringify({ errors: [], warnings: [] }), { status: 200 });
    }) as typeof globalThis.fetch;
    const d = slurmDrainer(config(), client("v0.0.41", fetch));
    await d.drain("gpu001", "fleet-manager cordon: RMA 1");
    await d.undrain("gpu001");
    expect(calls).toEqual([
      ["http://slurm.test:6820/slurm/v0.0.41/node/gpu001", { state: ["DRAIN"], reason: "fleet-manager cordon: RMA 1" }],
      ["http://slurm.test:6820/slurm/v0.0.41/node/gpu001", { state: ["UNDRAIN"] }],
    ]);
  });
});
