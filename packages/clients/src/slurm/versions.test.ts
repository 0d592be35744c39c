/**
 * The v0.0.40-0.0.43 shapes, which no slurmrestd here serves (Debian's 22.05 stops at v0.0.38).
 * Each fixture is built field by field from SchedMD's OpenAPI documents as slurmrestd generates
 * them: v0.0.40 from Slurm 25.05.0 (jontk/slurm-client, openapi-specs/slurm-v0.0.40.json), v0.0.41
 * from 24.05.8, v0.0.42 from 24.11.6 and v0.0.43 from 25.05.8 (SlinkyProject/slurm-client,
 * api/v004x/slurm-openapi.gen.json). Schemas used: `v0.0.4x_openapi_nodes_resp` {nodes, errors,
 * warnings, meta}; `v0.0.4x_node` {name: string, state: node_states (array of upper-case
 * states), reason: string, partitions: csv_string (array of strings)}; the node update,
 * `POST /slurm/v0.0.4x/node/{node_name}`, takes `v0.0.4x_update_node_msg` {state: array, reason:
 * string} and answers `v0.0.4x_openapi_resp` {errors, warnings, meta}.
 */
import { describe, expect, it } from "vitest";
import { SlurmApiError, SlurmClient } from "./index.ts";

type Call = { method: string; url: string; body: unknown; headers: Record<string, string> };

/** A fetch that answers each request with `answer(call)` and records it. */
function recordingFetch(answer: (c: Call) => { status: number; body: unknown }) {
  const calls: Call[] = [];
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    const call: Call = {
      method: init?.method ?? "GET",
      url: String(url),
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
    };
    calls.push(call);
    const { status, body } = answer(call);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const meta = (release: string) => ({
  plugin: { type: "openapi/slurmctld", name: "Slurm OpenAPI slurmctld" },
  slurm: { release },
});

describe.each([
  ["v0.0.40", "25.05.0"],
  ["v0.0.41", "24.05.8"],
  ["v0.0.42", "24.11.6"],
  ["v0.0.43", "25.05.8"],
])("slurmrestd %s shapes (Slurm %s's OpenAPI document)", (apiVersion, release) => {
  const client = (fetch: typeof globalThis.fetch) =>
    new SlurmClient({ baseUrl: "http://slurm.test:6820/", apiVersion, user: "hpcadmin", token: () => "jwt", fetch });

  it("reads nodes whose state is a list, base state first, as state and flags", async () => {
    const { fetch, calls } = recordingFetch(() => ({
      status: 200,
      body: {
        nodes: [
          { name: "gpu001", state: ["IDLE"], reason: "", partitions: ["gpu", "all"], reason_set_by_user: "" },
          {
            name: "gpu002",
            state: ["MIXED", "DRAIN"],
            reason: "fleet-manager cordon: RMA 7",
            partitions: ["gpu"],
            reason_set_by_user: "hpcadmin",
          },
          { name: "gpu003", state: ["DOWN", "NOT_RESPONDING"], reason: "Not responding", partitions: [] },
        ],
        last_update: { set: true, infinite: false, number: 1_750_000_000 },
        errors: [],
        warnings: [],
        meta: meta(release),
      },
    }));
    expect(await client(fetch).nodes()).toEqual([
      { name: "gpu001", state: "idle", stateFlags: [], reason: null, partitions: ["gpu", "all"] },
      {
        name: "gpu002",
        state: "mixed",
        stateFlags: ["DRAIN"],
        reason: "fleet-manager cordon: RMA 7",
        partitions: ["gpu"],
      },
      { name: "gpu003", state: "down", stateFlags: ["NOT_RESPONDING"], reason: "Not responding", partitions: [] },
    ]);
    expect(calls[0]).toMatchObject({
      method: "GET",
      url: `http://slurm.test:6820/slurm/${apiVersion}/nodes`,
      headers: { "x-slurm-user-name": "hpcadmin", "x-slurm-user-token": "jwt" },
    });
  });

  it("drains and undrains a node through POST /node/{name} with an update_node_msg", async () => {
    const { fetch, calls } = recordingFetch(() => ({
      status: 200,
      body: { errors: [], warnings: [], meta: meta(release) },
    }));
    const c = client(fetch);
    await c.updateNode("gpu002", { state: "DRAIN", reason: "fleet-manager cordon: RMA 7" });
    await c.updateNode("gpu002", { state: "UNDRAIN" });
    expect(calls.map((x) => [x.method, x.url, x.body])).toEqual([
      [
        "POST",
        `http://slurm.test:6820/slurm/${apiVersion}/node/gpu002`,
        { state: ["DRAIN"], reason: "fleet-manager cordon: RMA 7" },
      ],
      ["POST", `http://slurm.test:6820/slurm/${apiVersion}/node/gpu002`, { state: ["UNDRAIN"] }],
    ]);
  });

  it("fails a node update that slurmrestd answers with errors, naming them", async () => {
    const { fetch } = recordingFetch(() => ({
      status: 500,
      body: {
        errors: [
          {
            description: "Failure to update node gpu009",
            error_number: 2015,
            error: "Invalid node name specified",
            source: "slurm_update_node()",
          },
        ],
        warnings: [],
        meta: meta(release),
      },
    }));
    const err = await client(fetch)
      .updateNode("gpu009", { state: "UNDRAIN" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlurmApiError);
    expect((err as SlurmApiError).errorNumbers).toEqual([2015]);
    expect((err as Error).message).toContain("Invalid node name specified");
  });
});

describe("node update on v0.0.38 (Slurm 22.05)", () => {
  it("refuses without sending anything: that slurmrestd has no node update", async () => {
    const { fetch, calls } = recordingFetch(() => ({ status: 405, body: {} }));
    const c = new SlurmClient({ baseUrl: "http://slurm.test:6820", user: "root", token: () => "jwt", fetch });
    await expect(c.updateNode("gpu001", { state: "UNDRAIN" })).rejects.toThrow(/v0\.0\.38 cannot update nodes/);
    expect(calls).toEqual([]);
  });
});
