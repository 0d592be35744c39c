/** The DHCP activity, for sites where Fleet Manager manages the BMC network's dnsmasq. */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DevicePlan } from "@fm/domain/workflows";
import type { ActivityDeps } from "./deps.ts";
import { badInput, notConfigured } from "./failures.ts";

type DhcpDeps = Pick<ActivityDeps, "dhcpHostsDir">;

export function dhcpActivities(deps: DhcpDeps) {
  return { configureDhcp: (d: DevicePlan) => configureDhcp(deps, d) };
}

/**
 * A dnsmasq host reservation for the BMC, in the `--dhcp-hostsdir` file format (that of
 * `--dhcp-hostsfile`: the text right of `=` in `--dhcp-host`, i.e. `<mac>,<ip>,<name>`), written
 * atomically; dnsmasq rereads the folder on its own. Same content: no write.
 */
async function configureDhcp(deps: DhcpDeps, d: DevicePlan): Promise<{ written: boolean }> {
  if (!deps.dhcpHostsDir)
    throw notConfigured("the site enables configureDhcp but this worker has no FM_DHCP_HOSTS_DIR");
  if (!d.bmcMac || !d.bmcAddress) throw badInput(`${d.name} needs a BMC MAC address and IP for its DHCP reservation`);
  const file = join(deps.dhcpHostsDir, `${d.name}.conf`);
  const content = `# managed by Fleet Manager: ${d.name} BMC\n${d.bmcMac.toLowerCase()},${d.bmcAddress},${d.name}-bmc\n`;
  if ((await readFile(file, "utf8").catch(() => null)) === content) return { written: false };
  await mkdir(deps.dhcpHostsDir, { recursive: true });
  await writeFile(`${file}.tmp`, content, { mode: 0o644 });
  await rename(`${file}.tmp`, file);
  return { written: true };
}
