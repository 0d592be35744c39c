/**
 * The OpenStack agent end to end (see openstack-agent-env.ts): what it reflects from two real
 * Ironic services into the hub, and cordon. What is asserted is what an operator sees: device
 * state and history in the hub API, the agent's logs, its /metrics, and the Ironic nodes'
 * maintenance.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  failClean,
  getNode,
  setMaintenance,
  setProvisionState,
  waitForProvisionState,
  deleteNode,
} from "@fm/test-support/ironic";
import { eventually } from "@fm/test-support/wait";
import { INTERVAL_S, fullCycleAfterNow, startOpenstackEnv, type OpenstackEnv } from "./openstack-agent-env.ts";

let e: OpenstackEnv;
beforeAll(async () => {
  e = await startOpenstackEnv();
}, 120_000);
afterAll(() => e?.stop(), 60_000);

describe("OpenStack agent against two real Ironic services", () => {
  it("starts one reflector per needed instance and reflects every node within an interval", async () => {
    await e.agent.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'overcloud'");
    await e.agent.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'undercloud'");
    await eventually(
      async () => {
        for (const name of ["gpu-001", "gpu-005", "hv-002"]) {
          const d = await e.device(name);
          expect(d.ironic).toMatchObject({ nodeUuid: e.nodes[name], provisionState: "enroll", maintenance: false });
        }
        expect((await e.device("hv-001")).ironic.instance).toBe("undercloud");
        expect((await e.device("gpu-001")).ironic.instance).toBe("overcloud");
        expect((await e.device("gpu-serial-only-x")).ironic.nodeUuid).toBe(e.nodes["gpu-serial-only"]);
      },
      (INTERVAL_S + 10) * 1000,
    );
    // The stray node matches no device: reported, not invented.
    const cycle = await e.agent.waitForLog(
      (l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud" && l.unmatched === 1,
    );
    expect(cycle.items).toBe(7);
    // Store names in metrics, as the rollout guide's verification step expects.
    expect(
      await e.agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", {
        store: "ironic-nodes-overcloud",
      }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(
      await e.agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", {
        store: "ironic-nodes-undercloud",
      }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(await e.agent.metric("process_start_time_seconds")).toBeGreaterThan(0);
    // Heartbeats carry the reflector ages to the hub.
    await eventually(async () => {
      const sat = await e.api<{
        clients: {
          agent: string;
          lastHeartbeatAt: string | null;
          reflectorAgesSeconds: Record<string, number> | null;
        }[];
      }>("/api/v1/satellites/sys1-ice2/");
      const c = sat.body.clients.find((x) => x.agent === "openstack")!;
      expect(c.lastHeartbeatAt).not.toBeNull();
      expect(Object.keys(c.reflectorAgesSeconds ?? {}).sort()).toEqual([
        "ironic-nodes-overcloud",
        "ironic-nodes-undercloud",
      ]);
    });
  }, 60_000);

  it("an instance no device at the site needs is never contacted", async () => {
    const sta = await e.startAgent({
      FM_SITE: "stavanger",
      OPENSTACK_UNDERCLOUD_CLOUDS_FILE: await e.cloudsFile("decoy", e.decoy.url),
    });
    await sta.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'overcloud'");
    await sta.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("Skipping Ironic instance 'undercloud'"));
    await sta.waitForLog((l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud");
    expect(sta.logs.some((l) => l.msg === "Starting reflector for Ironic instance 'undercloud'")).toBe(false);
    expect(e.decoy.hits).toBe(0);
    // Not at setup, and not later: still nothing after two more full cycles (at least 2 intervals)
    // and after the agent stopped.
    await fullCycleAfterNow(sta, "ironic-nodes-overcloud");
    await fullCycleAfterNow(sta, "ironic-nodes-overcloud");
    expect(sta.logs.some((l) => l.msg === "Starting reflector for Ironic instance 'undercloud'")).toBe(false);
    expect(e.decoy.hits).toBe(0);
    expect(
      await sta.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "ironic-nodes-undercloud" }),
    ).toBeUndefined();
    expect(await sta.stop()).toBe(0);
    expect(e.decoy.hits).toBe(0);
  }, 60_000);

  it("reflects manage, provide, active, deleted, maintenance and a failed clean, with history", async () => {
    const [cycled, maintained, failing] = await e.ownNodes("gpu", 3);
    const id = cycled!.uuid;
    await setProvisionState(e.over.url, id, "manage");
    await waitForProvisionState(e.over.url, id, "manageable", 20_000);
    await eventually(async () => expect((await e.device(cycled!.name)).ironic.provisionState).toBe("manageable"));
    await setProvisionState(e.over.url, id, "provide");
    await waitForProvisionState(e.over.url, id, "available", 30_000);
    await eventually(async () => expect((await e.device(cycled!.name)).ironic.provisionState).toBe("available"));
    await setProvisionState(e.over.url, id, "active");
    await waitForProvisionState(e.over.url, id, "active", 30_000);
    await eventually(async () => expect((await e.device(cycled!.name)).ironic.provisionState).toBe("active"));
    await setProvisionState(e.over.url, id, "deleted");
    await waitForProvisionState(e.over.url, id, "available", 30_000);
    await eventually(async () => expect((await e.device(cycled!.name)).ironic.provisionState).toBe("available"));
    const d = await e.device(cycled!.name);
    // Every stable state, in order; transient ones (cleaning, deploying, deleting) may or may
    // not have been caught by a cycle, so they are left out of the comparison.
    const stable = new Set(["enroll", "manageable", "available", "active"]);
    const entries = await e.history(d.id);
    expect(entries.filter((h) => stable.has(String(h.newValue))).map((h) => h.newValue)).toEqual([
      "enroll",
      "manageable",
      "available",
      "active",
      "available",
    ]);
    expect(entries.every((h) => h.source === "ironic-overcloud")).toBe(true);

    await setMaintenance(e.over.url, maintained!.uuid, "operator: replacing PSU 2");
    await eventually(async () =>
      expect((await e.device(maintained!.name)).ironic).toMatchObject({
        maintenance: true,
        maintenanceReason: "operator: replacing PSU 2",
      }),
    );
    expect((await e.history((await e.device(maintained!.name)).id, "maintenance")).at(-1)).toMatchObject({
      oldValue: { on: false },
      newValue: { on: true, reason: "operator: replacing PSU 2" },
    });

    const bad = failing!.uuid;
    await setProvisionState(e.over.url, bad, "manage");
    await waitForProvisionState(e.over.url, bad, "manageable", 20_000);
    await failClean(e.over.url, bad);
    const failed = await getNode(e.over.url, bad);
    expect(failed.provision_state).toBe("clean failed");
    await eventually(async () => {
      const g = await e.device(failing!.name);
      expect(g.ironic).toMatchObject({
        provisionState: "clean failed",
        maintenance: true,
        lastError: failed.last_error,
      });
      expect(g.ironic.lastError).toBeTruthy();
    });
    const status = await e.api<{ operationalStatus: string }>(`/api/v1/devices/${(await e.device(failing!.name)).id}/`);
    expect(status.body.operationalStatus).toBe("FAILED");
  }, 120_000);

  it("a node deleted from Ironic is reported missing and its Ironic state cleared", async () => {
    const [gone] = await e.ownNodes("gpu", 1);
    const t = Date.now();
    await deleteNode(e.over.url, gone!.uuid);
    await eventually(async () =>
      expect((await e.device(gone!.name)).ironic).toMatchObject({
        nodeUuid: null,
        provisionState: null,
        observedAt: null,
      }),
    );
    await e.agent.waitForLog(
      (l) =>
        l.msg === "reflector cycle done" &&
        l.store === "ironic-nodes-overcloud" &&
        l.missing === 1 &&
        (l.time as number) > t,
    );
  }, 60_000);

  it("cordon puts the node in maintenance; uncordon clears only the agent's own maintenance", async () => {
    const [plain, operators, failed] = await e.ownNodes("gpu", 3);
    // One node in an operator's maintenance, one in Ironic's own after a failed clean.
    await setMaintenance(e.over.url, operators!.uuid, "operator: replacing PSU 2");
    await setProvisionState(e.over.url, failed!.uuid, "manage");
    await waitForProvisionState(e.over.url, failed!.uuid, "manageable", 20_000);
    await failClean(e.over.url, failed!.uuid);
    await eventually(async () => {
      expect((await e.device(operators!.name)).ironic.maintenance).toBe(true);
      expect((await e.device(failed!.name)).ironic).toMatchObject({
        provisionState: "clean failed",
        maintenance: true,
      });
    });
    const patch = async (name: string, body: unknown) => {
      const d = await e.device(name);
      const cur = await e.api(`/api/v1/devices/${d.id}/`);
      const r = await e.api(`/api/v1/devices/${d.id}/`, {
        method: "PATCH",
        body,
        headers: { "if-match": cur.headers.get("etag")! },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    await patch(plain!.name, { cordoned: true, cordonReason: "RMA 7: GPU 3 Xid 79" });
    await eventually(async () =>
      expect(await getNode(e.over.url, plain!.uuid)).toMatchObject({
        maintenance: true,
        maintenance_reason: "fleet-manager cordon: RMA 7: GPU 3 Xid 79",
      }),
    );
    await eventually(async () => expect((await e.device(plain!.name)).ironic.maintenance).toBe(true));
    // The operator's node: cordoning keeps their reason, uncordoning keeps it.
    await patch(operators!.name, { cordoned: true, cordonReason: "RMA 8" });
    await fullCycleAfterNow(e.agent, "ironic-nodes-overcloud");
    expect(await getNode(e.over.url, operators!.uuid)).toMatchObject({
      maintenance: true,
      maintenance_reason: "operator: replacing PSU 2",
    });

    await patch(plain!.name, { cordoned: false });
    await patch(operators!.name, { cordoned: false });
    await eventually(async () =>
      expect(await getNode(e.over.url, plain!.uuid)).toMatchObject({
        maintenance: false,
        maintenance_reason: null,
      }),
    );
    await eventually(async () => expect((await e.device(plain!.name)).ironic.maintenance).toBe(false));
    await fullCycleAfterNow(e.agent, "ironic-nodes-overcloud");
    expect(await getNode(e.over.url, operators!.uuid)).toMatchObject({
      maintenance: true,
      maintenance_reason: "operator: replacing PSU 2",
    });
    // The failed clean's maintenance (Ironic's own) is untouched by all this.
    expect(
      await getNode(e.over.url, failed!.uuid),
      JSON.stringify(e.agent.logs.filter((l) => l.node === failed!.uuid)),
    ).toMatchObject({ maintenance: true });
  }, 90_000);
});
