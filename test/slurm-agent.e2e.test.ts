/**
 * The SLURM agent end to end, every part a real process: a real SLURM 22.05 cluster (slurmctld,
 * four slurmd, slurmrestd with JWT auth; REST API v0.0.38, so drains go through scontrol), the
 * hub on PostgreSQL, and `npm run agent -- slurm` for site keflavik, whose devices are named
 * `kef-` + the node's name (SLURM_DEVICE_NAME_PREFIX). What is asserted is what an operator sees:
 * devices in the hub API, the agent's logs and /metrics, and the nodes as `scontrol show node`
 * reports them (not through the client under test).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase, type Database } from "../apps/hub/src/db/client.ts";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, clientToken, hubApi, startHub, type HubProcess } from "@fm/test-support/process";
import {
  scontrolNode as slurmNode,
  setNodeState,
  slurmCommand,
  startSlurm,
  type SlurmPeer,
} from "@fm/test-support/slurm";
import { eventually } from "@fm/test-support/wait";

const INTERVAL_S = 1;
const PREFIX = "kef-";
const STORE = "slurm-nodes";

interface Device {
  id: string;
  name: string;
  cordoned: boolean;
  slurm: {
    nodeName: string | null;
    state: string | null;
    stateFlags: string[];
    reason: string | null;
    partitions: string[];
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
let slurm: SlurmPeer;
let hub: HubProcess;
let db: Database;
let agent: AgentProcess;
let admin: string;
let tokenFile: string;

const api = hubApi(
  () => hub.url,
  () => admin,
);
const device = async (name: string): Promise<Device> => {
  const r = await api<{ items: Device[] }>(`/api/v1/devices/?nameExact=${name}`);
  expect(r.status).toBe(200);
  return r.body.items[0]!;
};
async function patchDevice(name: string, body: unknown): Promise<void> {
  const d = await device(name);
  const cur = await api(`/api/v1/devices/${d.id}/`);
  const r = await api(`/api/v1/devices/${d.id}/`, {
    method: "PATCH",
    body,
    headers: { "if-match": cur.headers.get("etag")! },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** A node as `scontrol -o show node` prints it: drained or not (State=IDLE+DRAIN) and its Reason. */
async function scontrolNode(name: string): Promise<{ drained: boolean; reason: string | null }> {
  const out = (await slurmCommand(slurm, "scontrol", ["-o", "show", "node", name])).trim();
  const state = /(?:^|\s)State=(\S+)/.exec(out)?.[1] ?? "";
  // Reason= runs to the end of the line: "Reason=text [user@time]".
  const reason = /(?:^|\s)Reason=(.*?)(?: \[[^\]]*\])?$/.exec(out)?.[1] ?? null;
  return { drained: state.split("+").includes("DRAIN"), reason };
}

/** Waits for a cycle that started after now to finish: the second one to finish from now on. */
async function fullCycleAfterNow(): Promise<void> {
  const t = Date.now();
  const first = await agent.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === STORE && (l.time as number) > t,
  );
  await agent.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === STORE && (l.time as number) > (first.time as number),
  );
}

beforeAll(async () => {
  const testDb = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => testDb.drop());
  slurm = await startSlurm({ nodes: 4 });
  cleanups.push(() => slurm.stop());
  db = createDatabase(testDb.url, { poolMax: 2 });
  cleanups.push(() => db.close());
  hub = await startHub({ DATABASE_URL: testDb.url, FM_STALE_AFTER_S: "600" });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  // NetBox's view: one device per SLURM node, plus one no node is.
  const kef = await seedNetboxOnlyDevices(db.prisma, { slug: "keflavik" }, [
    ...slurm.nodes.map((n) => ({ name: `${PREFIX}${n}`, role: "gpu-node" as const })),
    { name: `${PREFIX}gpu999`, role: "gpu-node" as const },
  ]);
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "/api/v1/satellites/",
    {
      method: "POST",
      body: { name: "sys1-ice2", siteIds: [kef], environment: "prod" },
    },
  );
  expect(sat.status).toBe(201);
  const creds = sat.body.secrets.find((s) => s.agent === "slurm")!;
  tokenFile = join(await mkdtemp(join(tmpdir(), "fm-slurm-e2e-")), "jwt");
  await writeFile(tokenFile, `${slurm.token}\n`);
  agent = await startAgent("slurm", {
    FM_HUB_URL: hub.url,
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "keflavik",
    FM_REFLECT_INTERVAL_S: String(INTERVAL_S),
    FM_HEARTBEAT_INTERVAL_S: "1",
    FM_BACKOFF_BASE_MS: "250",
    FM_BACKOFF_MAX_S: "2",
    FM_MAX_CONSECUTIVE_FAILURES: "40",
    FM_HTTP_TIMEOUT_MS: "5000",
    SLURM_URL: slurm.url,
    SLURM_API_VERSION: "v0.0.38",
    // The peer's token is root's; the guide's is hpcadmin's (the default).
    SLURM_USER: "root",
    SLURM_TOKEN_FILE: tokenFile,
    SLURM_DEVICE_NAME_PREFIX: PREFIX,
    // For scontrol: where slurmctld is. Its authentication is the JWT the agent passes.
    SLURM_CONF: slurm.slurmConf,
  });
  cleanups.push(() => agent.stop("SIGKILL"));
  await agent.waitForLog((l) => l.msg === "reflector cycle done" && l.store === STORE);
}, 180_000);
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

describe("SLURM agent against a real SLURM 22.05 (slurmrestd v0.0.38)", () => {
  it("reflects every node onto its device (deviceNamePrefix), with state, flags, reason and partitions", async () => {
    const start = await agent.waitForLog((l) => String(l.msg).startsWith("Starting reflector for SLURM"));
    expect(start).toMatchObject({ store: STORE, apiVersion: "v0.0.38", user: "root", drainVia: "scontrol" });
    for (const n of slurm.nodes)
      expect((await device(`${PREFIX}${n}`)).slurm).toMatchObject({
        nodeName: n,
        state: "IDLE",
        stateFlags: [],
        reason: null,
        partitions: ["gpu"],
      });
    expect((await device(`${PREFIX}gpu999`)).slurm.nodeName).toBeNull();
    const cycle = await agent.waitForLog((l) => l.msg === "reflector cycle done" && l.store === STORE);
    expect(cycle).toMatchObject({ items: 4, unmatched: 0 });
    expect(
      await agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: STORE }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(await agent.metric("fleet_manager_reflector_items", { store: STORE })).toBe(4);
  }, 60_000);

  it("shows a drain made by hand in the hub within one interval", async () => {
    await setNodeState(slurm, "gpu001", "drain", "operator: reseating DIMM B2");
    // Every cycle that starts after the drain sees it: the hub shows it once one such cycle is done.
    await fullCycleAfterNow();
    expect((await device(`${PREFIX}gpu001`)).slurm).toMatchObject({
      state: "IDLE",
      stateFlags: ["DRAIN"],
      reason: "operator: reseating DIMM B2",
    });
    await setNodeState(slurm, "gpu001", "resume");
    await fullCycleAfterNow();
    expect((await device(`${PREFIX}gpu001`)).slurm).toMatchObject({ stateFlags: [], reason: null });
  }, 60_000);

  it("cordon drains the node, uncordon undrains it; an operator's drain survives both", async () => {
    await setNodeState(slurm, "gpu003", "drain", "operator: swapping PSU 2");
    await patchDevice(`${PREFIX}gpu002`, { cordoned: true, cordonReason: "RMA 7: GPU 3 Xid 79" });
    await patchDevice(`${PREFIX}gpu003`, { cordoned: true, cordonReason: "RMA 8" });
    await eventually(async () =>
      expect(await scontrolNode("gpu002")).toEqual({
        drained: true,
        reason: "fleet-manager cordon: RMA 7: GPU 3 Xid 79",
      }),
    );
    await eventually(async () =>
      expect((await device(`${PREFIX}gpu002`)).slurm).toMatchObject({
        stateFlags: ["DRAIN"],
        reason: "fleet-manager cordon: RMA 7: GPU 3 Xid 79",
      }),
    );
    expect(agent.logs).toContainEqual(
      expect.objectContaining({ msg: "cordon: SLURM node drained", node: "gpu002", via: "scontrol" }),
    );
    // The operator's node keeps their reason while cordoned.
    await fullCycleAfterNow();
    expect(await scontrolNode("gpu003")).toEqual({ drained: true, reason: "operator: swapping PSU 2" });

    await patchDevice(`${PREFIX}gpu002`, { cordoned: false });
    await patchDevice(`${PREFIX}gpu003`, { cordoned: false });
    await eventually(async () => expect(await scontrolNode("gpu002")).toEqual({ drained: false, reason: null }));
    await eventually(async () =>
      expect((await device(`${PREFIX}gpu002`)).slurm).toMatchObject({ stateFlags: [], reason: null }),
    );
    await fullCycleAfterNow();
    expect(await scontrolNode("gpu003")).toEqual({ drained: true, reason: "operator: swapping PSU 2" });
    expect((await device(`${PREFIX}gpu003`)).slurm).toMatchObject({
      stateFlags: ["DRAIN"],
      reason: "operator: swapping PSU 2",
    });
  }, 90_000);

  it("leaves SLURM's own DOWN alone: a DOWN node is not drained over, and a drained node gone DOWN is undrained, not resumed", async () => {
    const words = (state: string) => state.replace(/\*$/, "").split("+");
    // SLURM took gpu004 out itself. A cordon takes no new work from it either way: its reason stays SLURM's.
    await setNodeState(slurm, "gpu004", "down", "Not responding");
    await patchDevice(`${PREFIX}gpu004`, { cordoned: true, cordonReason: "RMA 9" });
    await fullCycleAfterNow();
    await fullCycleAfterNow();
    const down = await slurmNode(slurm, "gpu004");
    expect(words(down.state)).toContain("DOWN");
    expect(words(down.state)).not.toContain("DRAIN");
    expect(down.reason).toMatch(/^Not responding/);
    await patchDevice(`${PREFIX}gpu004`, { cordoned: false });
    await fullCycleAfterNow();
    expect(words((await slurmNode(slurm, "gpu004")).state)).toContain("DOWN");

    // gpu001, drained by its cordon, then DOWN in SLURM with the drain still on it (DOWN+DRAIN):
    // uncordon clears the agent's drain and nothing else. `resume` would have brought it back up.
    await patchDevice(`${PREFIX}gpu001`, { cordoned: true, cordonReason: "RMA 10" });
    await eventually(async () => expect(await scontrolNode("gpu001")).toMatchObject({ drained: true }));
    await setNodeState(slurm, "gpu001", "down", "fleet-manager cordon: RMA 10");
    const before = await slurmNode(slurm, "gpu001");
    expect(words(before.state)).toEqual(expect.arrayContaining(["DOWN", "DRAIN"]));
    await patchDevice(`${PREFIX}gpu001`, { cordoned: false });
    await eventually(async () => expect(words((await slurmNode(slurm, "gpu001")).state)).not.toContain("DRAIN"));
    expect(words((await slurmNode(slurm, "gpu001")).state)).toContain("DOWN");
    await eventually(async () =>
      expect((await device(`${PREFIX}gpu001`)).slurm).toMatchObject({ state: "DOWN", stateFlags: [] }),
    );
    expect(agent.logs).toContainEqual(
      expect.objectContaining({ msg: "uncordon: SLURM drain cleared", node: "gpu001" }),
    );
    // Back in service for the other tests, by hand as an operator would.
    await setNodeState(slurm, "gpu001", "resume");
    await setNodeState(slurm, "gpu004", "resume");
  }, 90_000);

  it("reads the JWT from its file at each request: a rotated token is used without a restart", async () => {
    const failures = () =>
      agent.metric("fleet_manager_reflector_errors_total", { store: STORE, reason: "slurm_http_error" });
    const before = (await failures()) ?? 0;
    await writeFile(tokenFile, "not-a-valid-jwt\n");
    await eventually(async () => expect((await failures()) ?? 0).toBeGreaterThan(before), 30_000);
    await writeFile(tokenFile, `${slurm.token}\n`);
    // A cycle that started after the rotation succeeds: the process read the new token itself.
    await fullCycleAfterNow();
  }, 60_000);
});
