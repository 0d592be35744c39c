/** The DHCP activity, for sites where Fleet Manager manages the BMC network's dnsmasq. */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { Uuid, canonicalMac } from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import type { ActivityDeps } from "./deps.ts";
import { badInput, notConfigured } from "./failures.ts";

type DhcpDeps = Pick<ActivityDeps, "dhcpHostsDir">;

export function dhcpActivities(deps: DhcpDeps) {
  return { configureDhcp: (d: DevicePlan) => configureDhcp(deps, d) };
}

/** A DNS label (RFC 1123 §2.1): what dnsmasq takes as a host name. */
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A name that was once a file name here as it is (before files were named by id). */
const PLAIN_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A dnsmasq host reservation for the BMC, in the `--dhcp-hostsdir` file format (that of
 * `--dhcp-hostsfile`: the text right of `=` in `--dhcp-host`, i.e. `<mac>,<ip>[,<name>]`), written
 * atomically; dnsmasq rereads the folder on its own. Same content: no write.
 *
 * Nothing NetBox holds reaches a path or a field as it is: the file is named by the device's id
 * (a NetBox name may be `../../etc/x`), the MAC and the address must be a MAC and an IP (a comma in
 * either would add dnsmasq fields, `set:` tags or a lease time), and the host name is given only
 * when `<name>-bmc` is a DNS label.
 */
async function configureDhcp(deps: DhcpDeps, d: DevicePlan): Promise<{ written: boolean }> {
  if (!deps.dhcpHostsDir)
    throw notConfigured("the site enables configureDhcp but this worker has no FM_DHCP_HOSTS_DIR");
  if (!d.bmcMac || !d.bmcAddress) throw badInput(`${d.name} needs a BMC MAC address and IP for its DHCP reservation`);
  const mac = canonicalMac(d.bmcMac);
  if (!mac) throw badInput(`${d.name}'s BMC MAC address in NetBox is not a MAC address`);
  if (!isIP(d.bmcAddress)) throw badInput(`${d.name}'s BMC address in NetBox is not an IP address`);
  const file = join(deps.dhcpHostsDir, `${d.deviceId}.conf`);
  const host = DNS_LABEL.test(`${d.name}-bmc`) ? `,${d.name}-bmc` : "";
  const content = `# managed by Fleet Manager: BMC of device ${d.deviceId}\n${mac.toLowerCase()},${d.bmcAddress}${host}\n`;
  const written = (await readFile(file, "utf8").catch(() => null)) !== content;
  if (written) {
    await mkdir(deps.dhcpHostsDir, { recursive: true });
    await writeFile(`${file}.tmp`, content, { mode: 0o644 });
    await rename(`${file}.tmp`, file);
  }
  // The file a worker before this one wrote under the device's name: the same reservation twice.
  // (Never a name shaped like an id: that file would be another device's.)
  if (PLAIN_FILE_NAME.test(d.name) && !Uuid.safeParse(d.name).success)
    await rm(join(deps.dhcpHostsDir, `${d.name}.conf`), { force: true });
  return { written };
}
