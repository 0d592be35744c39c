/**
 * Schema-driven fuzzing of every operation in /openapi.json (see testing/fuzz.ts): a few
 * thousand requests, valid and broken, from a seeded PRNG. No answer may be a 5xx, and every
 * 4xx must be problem+json. A failure prints its seed: FM_FUZZ_SEED=<seed> reruns exactly
 * those requests. `npm run bench -- fuzz` runs a larger batch over HTTP.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { AGENT_KINDS, REFLECTION_SOURCES } from "@fm/domain";
import { startTestHub, type TestHub } from "../testing/test-hub.ts";
import { seedInventory } from "../testing/inventory.ts";
import { distinctFailures, runFuzz, type FuzzFixtures } from "../testing/fuzz.ts";
import type { Principal } from "../lib/context.ts";

const SEED = Number(process.env.FM_FUZZ_SEED ?? 20261203);
const REQUESTS = Number(process.env.FM_FUZZ_REQUESTS ?? 2500);

let hub: TestHub;
let fixtures: FuzzFixtures;
beforeAll(async () => {
  let agentSites: string[] = [];
  // Routes for agents are called as an agent of a satellite serving the demo sites, every other
  // route as an administrator: each request gets past authorisation to its input handling.
  const admin: Principal = { id: "fuzz-admin", kind: "client", scopes: new Set(["fleet.admin"]) };
  hub = await startTestHub({
    authenticate: async (request) => {
      if (request.routeOptions.config?.scope !== "agent") return admin;
      const kind = (request.params as { agent?: string }).agent ?? "openstack";
      const agentKind = (kind in AGENT_KINDS ? kind : "openstack") as keyof typeof AGENT_KINDS;
      return {
        id: `fuzz-agent-${agentKind}`,
        kind: "agent",
        scopes: new Set(["fleet.read", `agent:${agentKind}`]),
        agent: { satellite: "fuzz-sat", kind: agentKind, siteIds: agentSites },
      };
    },
  });
  const inv = await seedInventory(hub.db.prisma, 5);
  agentSites = Object.values(inv.sites);
  const devices = await hub.db.prisma.device.findMany({ select: { id: true }, take: 10 });
  fixtures = {
    params: {
      id: [...agentSites, ...devices.map((d) => d.id)],
      site_id: agentSites,
      name: ["fuzz-sat"],
      agent: Object.keys(AGENT_KINDS),
      source: [...REFLECTION_SOURCES],
    },
  };
  await hub.app.inject({
    method: "POST",
    url: "/api/v1/satellites/",
    payload: { name: "fuzz-sat", siteIds: agentSites, environment: "dev" },
  });
});
afterAll(() => hub.close());

it(`${REQUESTS} fuzzed requests over every operation: no 5xx, every 4xx problem+json`, async () => {
  const doc = (await hub.app.inject({ url: "/openapi.json" })).json();
  const result = await runFuzz(doc, fixtures, { seed: SEED, requests: REQUESTS }, async (req) => {
    const res = await hub.app.inject({
      method: req.method as "GET",
      url: req.url,
      headers: req.headers,
      ...(req.payload !== undefined ? { payload: req.payload } : {}),
    });
    return { statusCode: res.statusCode, headers: res.headers, body: res.body };
  });
  // Every operation: the document's whole list (at least the 49 the probe counted), each reached.
  expect(result.operations).toBeGreaterThanOrEqual(49);
  expect(result.unreached).toEqual([]);
  const causes = hub.logs
    .filter((l) => l.msg === "unhandled error")
    .map((l) =>
      String((l.err as { message?: string } | undefined)?.message)
        .replace(/\s+/g, " ")
        .slice(0, 300),
    );
  expect(
    [...distinctFailures(result), ...new Set(causes)].slice(0, 30),
    `seed ${SEED} (rerun: FM_FUZZ_SEED=${SEED}); ${result.failures.length} failures; statuses ${JSON.stringify(result.byStatus)}`,
  ).toEqual([]);
  // The run reached past validation: some requests succeeded.
  expect(Object.keys(result.byStatus).some((s) => Number(s) < 300)).toBe(true);
}, 120_000);
