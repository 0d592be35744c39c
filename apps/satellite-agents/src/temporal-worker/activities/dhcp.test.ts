/** The DHCP activity under Temporal's MockActivityEnvironment, writing to a scratch folder. */
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectFinal, plan, rejection, run } from "./activity-testing.ts";
import type { ActivityDeps } from "./deps.ts";
import { dhcpActivities } from "./dhcp.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "fm-dhcp-"));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

const activities = (over: Partial<ActivityDeps> = {}) =>
  dhcpActivities({ dhcpHostsDir: join(scratch, "dhcp-hosts"), ...over });

describe("configureDhcp", () => {
  it("writes the BMC's reservation once, and refuses a device without a MAC or a worker without a folder", async () => {
    const acts = activities();
    const dir = join(scratch, "dhcp-hosts");
    const d = plan({ bmcMac: "B8:3F:D2:00:AB:CD", bmcAddress: "10.201.3.4" });
    expect((await run(acts.configureDhcp, d)).result).toEqual({ written: true });
    const file = join(dir, `${d.name}.conf`);
    const content = await readFile(file, "utf8");
    const entries = content.split("\n").filter((l) => l && !l.startsWith("#"));
    expect(entries).toHaveLength(1);
    // dnsmasq's --dhcp-hostsdir files take the --dhcp-hostsfile format: `<mac>,<ip>,<name>`,
    // without the `dhcp-host=` keyword.
    expect(entries[0]).toBe(`b8:3f:d2:00:ab:cd,10.201.3.4,${d.name}-bmc`);

    expect((await run(acts.configureDhcp, d)).result).toEqual({ written: false });
    expect(await readFile(file, "utf8")).toBe(content);

    const noMac = plan({ bmcMac: null });
    expectFinal(await rejection(run(acts.configureDhcp, noMac)), "BadInput", /needs a BMC MAC address/);
    expect(await readdir(dir)).toEqual([`${d.name}.conf`]);
    expectFinal(await rejection(run(activities({ dhcpHostsDir: undefined }).configureDhcp, d)), "NotConfigured");
  });
});
