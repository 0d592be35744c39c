/**
 * Reads a BMC's host Ethernet interfaces over Redfish: the system (the configured
 * redfish_system_id, else the one member of /redfish/v1/Systems), its EthernetInterfaces
 * collection, and each member's `Id` and `MACAddress`. Wire format: DMTF Redfish DSP0266 1.15
 * (HTTP Basic authentication, collections as `Members` of `@odata.id` links) and the
 * EthernetInterface schema (DSP8010, `EthernetInterface.v1_9_0`: `MACAddress` is "the currently
 * configured MAC address of the interface", `PermanentMACAddress` the burned-in one), as DMTF's
 * public-rackmount1 mock-up serves them.
 *
 * The credentials are the caller's and stay here: no message built here names them.
 */
import type { BmcCredentials } from "./bmc-credentials.ts";

export interface BmcEthernetInterface {
  /** The resource's `Id` (what NetBox names the interface, in the swap's matching). */
  id: string;
  mac: string;
}

export class RedfishReadError extends Error {
  override name = "RedfishReadError";
  constructor(
    message: string,
    /** The HTTP status, when the BMC answered (401: the credentials are refused). */
    readonly status?: number,
  ) {
    super(message);
  }
}

type Link = { "@odata.id": string };

export async function readBmcEthernetInterfaces(o: {
  baseUrl: string;
  credentials: BmcCredentials;
  systemId?: string | undefined;
  timeoutMs?: number;
}): Promise<BmcEthernetInterface[]> {
  const base = o.baseUrl.replace(/\/+$/, "");
  const authorization = `Basic ${Buffer.from(`${o.credentials.username}:${o.credentials.password}`).toString("base64")}`;
  const get = async <T>(path: string): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        headers: { accept: "application/json", authorization },
        signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new RedfishReadError(`BMC at ${base} did not answer GET ${path}: ${(err as Error).message}`);
    }
    if (!res.ok)
      throw new RedfishReadError(
        res.status === 401
          ? `BMC at ${base} refused the credentials (401) on GET ${path}`
          : `BMC at ${base} answered GET ${path} with ${res.status}`,
        res.status,
      );
    return (await res.json()) as T;
  };
  let system: string;
  if (o.systemId) system = o.systemId.startsWith("/") ? o.systemId : `/redfish/v1/Systems/${o.systemId}`;
  else {
    const systems = await get<{ Members?: Link[] }>("/redfish/v1/Systems");
    const members = systems.Members ?? [];
    if (members.length !== 1)
      throw new RedfishReadError(
        `BMC at ${base} has ${members.length} systems; set IRONIC_REDFISH_SYSTEM_ID to say which is the host`,
      );
    system = members[0]!["@odata.id"].replace(/\/+$/, "");
  }
  const sys = await get<{ EthernetInterfaces?: Link }>(system);
  const collection = sys.EthernetInterfaces?.["@odata.id"];
  if (!collection) throw new RedfishReadError(`BMC at ${base}: system ${system} lists no EthernetInterfaces`);
  const list = await get<{ Members?: Link[] }>(collection.replace(/\/+$/, ""));
  const out: BmcEthernetInterface[] = [];
  for (const m of list.Members ?? []) {
    const nic = await get<{ Id?: string; MACAddress?: string | null }>(m["@odata.id"].replace(/\/+$/, ""));
    if (nic.Id && nic.MACAddress) out.push({ id: nic.Id, mac: nic.MACAddress });
  }
  return out;
}
