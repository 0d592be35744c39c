/** The DHCP activity under Temporal's MockActivityEnvironment, writing to a scratch folder. */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
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
    const file = join(dir, `${d.deviceId}.conf`);
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
    expect(await readdir(dir)).toEqual([`${d.deviceId}.conf`]);
    expectFinal(await rejection(run(activities({ dhcpHostsDir: undefined }).configureDhcp, d)), "NotConfigured");
  });

  it("lets nothing NetBox holds reach a path or a dnsmasq field: the file is named by id, MAC and IP must be one, the host name only a DNS label", async () => {
    const dir = join(scratch, "hostile");
    const acts = activities({ dhcpHostsDir: dir });
    const traversal = plan({
      name: "../../../../tmp/fm-dhcp-escape",
      bmcMac: "B8:3F:D2:00:AB:01",
      bmcAddress: "10.201.3.5",
    });
    expect((await run(acts.configureDhcp, traversal)).result).toEqual({ written: true });
    expect(await readdir(dir)).toEqual([`${traversal.deviceId}.conf`]);
    await expect(readFile("/tmp/fm-dhcp-escape.conf", "utf8")).rejects.toThrow(/ENOENT/);
    // No host name: `../../…-bmc` is not a DNS label, and a comma in one would be another field.
    const lines = (name: string) =>
      readFile(join(dir, `${name}.conf`), "utf8").then((t) => t.split("\n").filter((l) => l && !l.startsWith("#")));
    expect(await lines(traversal.deviceId)).toEqual(["b8:3f:d2:00:ab:01,10.201.3.5"]);
    const comma = plan({ name: "gpu-1,set:pxe,infinite", bmcMac: "B8:3F:D2:00:AB:02", bmcAddress: "10.201.3.6" });
    await run(acts.configureDhcp, comma);
    expect(await lines(comma.deviceId)).toEqual(["b8:3f:d2:00:ab:02,10.201.3.6"]);
    for (const bad of [
      { bmcAddress: "10.201.3.7,set:evil" },
      { bmcAddress: "bmc.example.com" },
      { bmcMac: "B8:3F:D2:00:AB:03,ignore" },
    ])
      expectFinal(
        await rejection(
          run(acts.configureDhcp, plan({ bmcMac: "B8:3F:D2:00:AB:03", bmcAddress: "10.201.3.7", ...bad })),
        ),
        "BadInput",
        /is not an? (IP|MAC) address/,
      );
    expect((await readdir(dir)).sort()).toEqual([`${comma.deviceId}.conf`, `${traversal.deviceId}.conf`].sort());
  });

  it("replaces the file an earlier worker wrote under the device's name, but never one named like an id", async () => {
    const dir = join(scratch, "legacy");
    const acts = activities({ dhcpHostsDir: dir });
    const d = plan({ bmcMac: "B8:3F:D2:00:AB:10", bmcAddress: "10.201.3.10" });
    const other = plan({ bmcMac: "B8:3F:D2:00:AB:11", bmcAddress: "10.201.3.11" });
    await run(acts.configureDhcp, other);
    await writeFile(join(dir, `${d.name}.conf`), "b8:3f:d2:00:ab:10,10.201.3.10,old\n");
    await run(acts.configureDhcp, d);
    expect((await readdir(dir)).sort()).toEqual([`${d.deviceId}.conf`, `${other.deviceId}.conf`].sort());
    // A device NetBox names after another device's id does not remove that device's reservation.
    await run(
      acts.configureDhcp,
      plan({ name: other.deviceId, bmcMac: "B8:3F:D2:00:AB:12", bmcAddress: "10.201.3.12" }),
    );
    expect(await readdir(dir)).toContain(`${other.deviceId}.conf`);
  });
});
