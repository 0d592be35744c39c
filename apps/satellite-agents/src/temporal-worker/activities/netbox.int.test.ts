/**
 * The NetBox activities under Temporal's MockActivityEnvironment, against the NetBox test server
 * (NetBox's REST API in memory): the activities use the real client, and the assertions read the
 * server's store and the requests it received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient, NetboxClient } from "@fm/clients";
import type { DevicePlan } from "@fm/domain/workflows";
import { startNetboxServer, type DeviceRecord, type NetboxServer } from "@fm/test-support/netbox-server";
import {
  NETBOX_TOKEN,
  activityFleet,
  deadEndpoint,
  expectFinal,
  expectRetryable,
  gpuServers,
  plan,
  rejection,
  run,
} from "./activity-testing.ts";
import type { ActivityDeps } from "./deps.ts";
import { netboxActivities } from "./netbox.ts";

let nb: NetboxServer;
let gpus: ReturnType<typeof gpuServers>;
beforeAll(async () => {
  nb = await startNetboxServer({ token: NETBOX_TOKEN, data: activityFleet() });
  gpus = gpuServers(nb);
});
afterAll(() => nb?.stop());

/**
 * The NetBox activities as the worker builds them, on the real client; `over` replaces any
 * dependency. The enrolment check only asks whether this worker has the device's Ironic
 * instance, so that client is never called.
 */
const activities = (over: Partial<ActivityDeps> = {}) =>
  netboxActivities({
    netbox: new NetboxClient({ url: nb.url, token: NETBOX_TOKEN, backoffMs: 5 }),
    ironic: { overcloud: new IronicClient({ endpoint: "http://127.0.0.1:1" }) },
    ...over,
  });
const netboxDevice = (status: string) => gpus.take(status);
const netboxPatches = (id: number) => gpus.patches(id);

describe("NetBox activities", () => {
  const planFor = (d: DeviceRecord, over: Partial<DevicePlan> = {}) =>
    plan({ name: d.name!, netboxId: d.id, bmcAddress: null, ...over });

  it("netboxCheckStaged passes a staged device with a BMC IP and refuses one not staged or without an out-of-band IP", async () => {
    const acts = activities();
    expect((await run(acts.netboxCheckStaged, planFor(netboxDevice("staged")))).result).toBeUndefined();
    expectFinal(
      await rejection(run(acts.netboxCheckStaged, planFor(netboxDevice("active")))),
      "BadInput",
      /is active in NetBox; enrolment needs it staged/,
    );
    const noOob = netboxDevice("staged");
    noOob.oob_ip = null;
    expectFinal(await rejection(run(acts.netboxCheckStaged, planFor(noOob))), "BadInput", /out-of-band \(BMC\) IP/);
    expectFinal(await rejection(run(acts.netboxCheckStaged, plan({ netboxId: null }))), "BadInput", /has no NetBox id/);
  });

  it("netboxActivate with a tag NetBox does not have is BadInput and changes nothing", async () => {
    const nbd = netboxDevice("staged");
    const before = structuredClone(nbd);
    const f = expectFinal(
      await rejection(
        run(activities().netboxActivate, planFor(nbd), { platformClass: "gb300", tags: ["gpu", "no-such-tag"] }),
      ),
      "BadInput",
    );
    expect(f.message).toContain("no-such-tag");
    expect(netboxPatches(nbd.id)).toBe(0);
    expect(nbd).toEqual(before);
  });

  it("netboxActivate sets status active, platform class and tags, and a second run sends no PATCH", async () => {
    const acts = activities();
    const nbd = netboxDevice("staged");
    const d = planFor(nbd);
    const burnIn = nb.data.tags.find((t) => t.slug === "burn-in")!.id;
    nbd.tags = nbd.tags.filter((t) => t !== burnIn);
    await run(acts.netboxActivate, d, { platformClass: "gb300", tags: ["burn-in", "fleet-managed"] });
    expect(nbd.status).toBe("active");
    expect(nbd.custom_fields.platform_class).toBe("gb300");
    expect(nbd.tags).toContain(burnIn);
    expect(nbd.tags).toContain(nb.data.tags.find((t) => t.slug === "fleet-managed")!.id);
    const patches = netboxPatches(nbd.id);
    expect(patches).toBeGreaterThan(0);

    await run(acts.netboxActivate, d, { platformClass: "gb300", tags: ["burn-in", "fleet-managed"] });
    expect(netboxPatches(nbd.id)).toBe(patches);
  });

  it("a NetBox that does not answer is thrown as a retryable error", async () => {
    const dead = await deadEndpoint();
    const acts = activities({
      netbox: new NetboxClient({ url: dead, token: NETBOX_TOKEN, maxAttempts: 2, backoffMs: 5 }),
    });
    const d = plan({ netboxId: gpus.all[0]!.id });
    expectRetryable(await rejection(run(acts.netboxCheckStaged, d)), "NetboxUnavailableError");
    expectRetryable(
      await rejection(run(acts.netboxActivate, d, { platformClass: null, tags: [] })),
      "NetboxUnavailableError",
    );
  });
});
