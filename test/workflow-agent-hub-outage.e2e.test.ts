/**
 * The workflow agent through a hub outage, as the runbook describes it: its work is the site's
 * job list in the hub, so when the hub goes away its cycles fail, each one counting, and it exits
 * 1 for Kubernetes to restart it (FleetManagerWorkflowAgentStale fires on the restarts). The
 * OpenStack agent does the opposite (openstack-agent-outages.e2e.test.ts). Real processes: the
 * hub on PostgreSQL, a Temporal dev server, `npm run agent -- workflow`.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAgent } from "@fm/test-support/agents";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { startTemporal, type TemporalPeer } from "@fm/test-support/temporal";

let db: TestDatabase;
let hub: HubProcess;
let temporal: TemporalPeer;
let agentEnv: Record<string, string>;

beforeAll(async () => {
  [db, temporal] = await Promise.all([createTestDatabase(inject("templateDatabase")), startTemporal()]);
  hub = await startHub({ DATABASE_URL: db.url });
  const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(`${hub.url}${path}`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(201);
    return (await res.json()) as T;
  };
  const site = await post<{ id: string }>("/api/v1/sites/", { slug: "keflavik", name: "Keflavik" });
  const sat = await post<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "/api/v1/satellites/",
    { name: "sys1-ice2", siteIds: [site.id], environment: "dev" },
  );
  const creds = sat.secrets.find((s) => s.agent === "workflow")!;
  agentEnv = {
    FM_HUB_URL: hub.url,
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "keflavik",
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: "default",
    FM_REFLECT_INTERVAL_S: "1",
    FM_HEARTBEAT_INTERVAL_S: "1",
    FM_BACKOFF_BASE_MS: "100",
    FM_BACKOFF_MAX_S: "1",
    FM_MAX_CONSECUTIVE_FAILURES: "3",
  };
}, 120_000);

afterAll(async () => {
  await hub?.stop("SIGKILL");
  await temporal?.stop();
  await db?.drop();
}, 60_000);

describe("the workflow agent when the hub goes away", () => {
  it("fails its cycles against the budget and exits 1 for a restart", async () => {
    const agent = await startAgent("workflow", agentEnv, 60_000);
    try {
      await agent.waitForLog((l) => l.msg === "controller cycle done" && l.store === "workflow", 60_000);
      expect(agent.logs.find((l) => l.msg === "controller started")).toMatchObject({ hubOutage: "restart" });
      expect(await hub.stop()).toBe(0);

      expect(await agent.exited).toBe(1);
      const failures = agent.logs.filter((l) => String(l.msg).startsWith("controller cycle failed"));
      expect(failures.map((l) => [l.msg, l.countedFailures, l.level])).toEqual([
        ["controller cycle failed (1/3)", 1, "ERROR"],
        ["controller cycle failed (2/3)", 2, "ERROR"],
        ["controller cycle failed (3/3)", 3, "ERROR"],
      ]);
      // Unreachable, or a 503 from a hub that is closing while a cycle is in flight.
      for (const l of failures) expect(["hub_unavailable", "hub_error"]).toContain(l.reason);
      expect(agent.logs.at(-1)).toMatchObject({ msg: "agent exiting after repeated failures", exitCode: 1 });
    } finally {
      await agent.stop("SIGKILL");
    }
  }, 120_000);
});
