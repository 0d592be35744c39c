/**
 * The OpenStack agent end to end (see openstack-agent-env.ts) through outages: the hub down
 * (ridden out: the agent keeps listing Ironic and does not exit), the agent restarted, Ironic
 * unreachable (the agent exits for a restart). Asserted: the agent's logs, /metrics and exit
 * code, and that the hub converges with no transition lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setProvisionState, waitForProvisionState } from "@fm/test-support/ironic";
import { eventually } from "@fm/test-support/wait";
import { freePort } from "@fm/test-support/ports";
import { startOpenstackEnv, type OpenstackEnv } from "./openstack-agent-env.ts";

let e: OpenstackEnv;
beforeAll(async () => {
  e = await startOpenstackEnv();
}, 120_000);
afterAll(() => e?.stop(), 60_000);

describe("OpenStack agent when the hub, the agent or Ironic goes away", () => {
  it("with the hub down the agent backs off but never gives up, its age follows Ironic, and it pushes its latest view when the hub returns", async () => {
    const [gpu] = await e.ownNodes("gpu", 1);
    const [hv] = await e.ownNodes("hv", 1);
    // A failure budget of 3, so that the outage outlasts it many times over. One agent per
    // site, as deployed: the site's agent is started again afterwards.
    expect(await e.agent.stop()).toBe(0);
    const agent = await e.startAgent({ FM_MAX_CONSECUTIVE_FAILURES: "3" });
    try {
      await agent.waitForLog((l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud");
      const downAt = Date.now();
      await e.stopTheHub();
      // Changes in Ironic while the hub cannot hear about them.
      await setProvisionState(e.under.url, hv!.uuid, "manage");
      await setProvisionState(e.over.url, gpu!.uuid, "manage");
      await waitForProvisionState(e.under.url, hv!.uuid, "manageable", 20_000);
      await waitForProvisionState(e.over.url, gpu!.uuid, "manageable", 20_000);
      const failures = () =>
        agent.logs.filter(
          (l) =>
            typeof l.msg === "string" &&
            l.msg.startsWith("reflector cycle failed") &&
            l.store === "ironic-nodes-overcloud" &&
            (l.time as number) > downAt,
        );
      const failure = (n: number) =>
        agent.waitForLog(
          (l) => l.store === "ironic-nodes-overcloud" && l.consecutiveFailures === n && (l.time as number) > downAt,
        );
      const first = await failure(1);
      // Enough failures for the delay to reach its cap (250 ms doubling to 2 s), and twice the budget.
      const seventh = await failure(7);
      const age = (await agent.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }))!;

      // Backing off: failure n announces a delay between half and all of min(2 s, 250 ms * 2^(n-1)).
      const announced = failures().map((l) => [l.consecutiveFailures as number, l.retryInMs as number]);
      expect(announced.map(([n]) => n)).toEqual(announced.map((_, i) => i + 1));
      for (const [n, delay] of announced) {
        const ceiling = Math.min(2000, 250 * 2 ** (n! - 1));
        expect(delay, `failure ${n}`).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay, `failure ${n}`).toBeLessThanOrEqual(ceiling);
      }
      // ...and waits it out: the next attempt fails no sooner than the delay announced before it.
      const logged = failures();
      for (let i = 1; i < logged.length; i++)
        expect(
          (logged[i]!.time as number) - (logged[i - 1]!.time as number),
          `failure ${i + 1} after ${logged[i - 1]!.retryInMs as number} ms`,
        ).toBeGreaterThanOrEqual((logged[i - 1]!.retryInMs as number) - 1);
      // None of them counts toward the budget: the agent is still running.
      expect(first).toMatchObject({ level: "ERROR", reason: "hub_unavailable", countedFailures: 0 });
      expect(failures().every((l) => l.reason === "hub_unavailable" && l.countedFailures === 0)).toBe(true);
      expect(await Promise.race([agent.exited, Promise.resolve("running")])).toBe("running");
      expect(
        await agent.metric("fleet_manager_reflector_errors_total", {
          store: "ironic-nodes-overcloud",
          reason: "hub_unavailable",
        }),
      ).toBeGreaterThanOrEqual(7);
      // Its age is the time since it last listed Ironic, which it does at every retry: shorter
      // than the outage it has been through (an age of the hub's last acceptance would not be).
      expect(age).toBeLessThan(((seventh.time as number) - (first.time as number)) / 1000);

      await e.startTheHub();
      await agent.waitForLog(
        (l) =>
          l.msg === "hub available again: reflector pushed its latest view" && l.store === "ironic-nodes-overcloud",
      );
      await eventually(async () => {
        expect((await e.device(hv!.name)).ironic.provisionState).toBe("manageable");
        expect((await e.device(gpu!.name)).ironic.provisionState).toBe("manageable");
      }, 30_000);
      for (const name of [hv!.name, gpu!.name])
        expect((await e.history((await e.device(name)).id)).at(-1)).toMatchObject({
          oldValue: "enroll",
          newValue: "manageable",
        });
      await eventually(async () =>
        expect(
          await agent.metric("fleet_manager_reflector_consecutive_failures", { store: "ironic-nodes-overcloud" }),
        ).toBe(0),
      );
    } finally {
      await agent.stop();
      await e.startTheAgent();
    }
  }, 120_000);

  it("a restarted agent converges, including changes made while it was down", async () => {
    const [hv] = await e.ownNodes("hv", 1);
    expect(await e.agent.stop()).toBe(0);
    await setProvisionState(e.under.url, hv!.uuid, "manage");
    await waitForProvisionState(e.under.url, hv!.uuid, "manageable", 20_000);
    await e.startTheAgent();
    await eventually(async () => expect((await e.device(hv!.name)).ironic.provisionState).toBe("manageable"), 20_000);
    // Everything else converged and stayed as it was: a repeated view changes nothing.
    const cycle = await e.agent.waitForLog(
      (l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud",
    );
    expect(cycle).toMatchObject({ updated: 0, unmatched: 1 });
  }, 90_000);

  it("with Ironic down the reflector age grows, errors are counted, and after N failures the agent exits non-zero", async () => {
    // One agent per site, as deployed: two would race each other's pushes. The site's agent
    // is started again afterwards.
    expect(await e.agent.stop()).toBe(0);
    try {
      const dead = await e.startAgent({
        FM_MAX_CONSECUTIVE_FAILURES: "4",
        FM_BACKOFF_BASE_MS: "500",
        OPENSTACK_OVERCLOUD_CLOUDS_FILE: await e.cloudsFile("closed", `http://127.0.0.1:${await freePort()}`),
      });
      await dead.waitForLog((l) => l.msg === "reflector cycle failed (1/4)" && l.store === "ironic-nodes-overcloud");
      const age1 = (await dead.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }))!;
      await dead.waitForLog((l) => l.msg === "reflector cycle failed (2/4)" && l.store === "ironic-nodes-overcloud");
      const age2 = (await dead.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }))!;
      expect(age2).toBeGreaterThan(age1);
      expect(
        await dead.metric("fleet_manager_reflector_errors_total", {
          store: "ironic-nodes-overcloud",
          reason: "ironic_unavailable",
        }),
      ).toBeGreaterThanOrEqual(2);
      expect(
        await dead.metric("fleet_manager_reflector_last_success_timestamp_seconds", {
          store: "ironic-nodes-overcloud",
        }),
      ).toBeUndefined();
      // The undercloud reflector of the same process is fine meanwhile.
      expect(
        await dead.metric("fleet_manager_reflector_consecutive_failures", { store: "ironic-nodes-undercloud" }),
      ).toBe(0);
      expect(await dead.exited).toBe(1);
      expect(dead.logs.at(-1)).toMatchObject({ msg: "agent exiting after repeated failures", exitCode: 1 });
    } finally {
      await e.startTheAgent();
    }
  }, 90_000);
});
