/**
 * What the realistic fleet is made of: its sites, the interface layouts of its servers, and the
 * catalog every site shares (tags, manufacturers, device types, roles, the cluster type and
 * the config contexts carrying mlxconfig_config, bios_config and firmware_config).
 */
import type { ConfigContextRecord, NetboxData, TagRecord, Timestamps } from "./store.ts";

export const SITE_CATALOG = [
  {
    name: "IAD1",
    facility: "Ashburn DC7",
    tz: "America/New_York",
    address: "21715 Filigree Court, Ashburn, VA 20147",
    lat: 39.0438,
    lon: -77.4874,
  },
  {
    name: "PHX2",
    facility: "Phoenix PHX10",
    tz: "America/Phoenix",
    address: "2121 S Price Rd, Chandler, AZ 85286",
    lat: 33.3062,
    lon: -111.8413,
  },
  {
    name: "FRA1",
    facility: "Frankfurt FR5",
    tz: "Europe/Berlin",
    address: "Kleyerstrasse 90, 60326 Frankfurt am Main",
    lat: 50.1004,
    lon: 8.6278,
  },
  {
    name: "NRT1",
    facility: "Inzai Campus",
    tz: "Asia/Tokyo",
    address: "2-1 Matsuzaki, Inzai, Chiba 270-1337",
    lat: 35.8327,
    lon: 140.1453,
  },
  {
    name: "DFW3",
    facility: "Dallas DA11",
    tz: "America/Chicago",
    address: "1950 N Stemmons Fwy, Dallas, TX 75207",
    lat: 32.8006,
    lon: -96.8197,
  },
  {
    name: "AMS2",
    facility: "Amsterdam AM7",
    tz: "Europe/Amsterdam",
    address: "Kuiperbergweg 13, 1101 AE Amsterdam",
    lat: 52.3035,
    lon: 4.9383,
  },
];

export interface PortTemplate {
  name: string;
  type: string;
  speed: number | null;
  mtu: number | null;
  mgmt: boolean;
  mac: boolean;
  /** Cabled to a leaf switch port. */
  uplink: boolean;
}
export const port = (
  name: string,
  type: string,
  speed: number | null,
  o: Partial<PortTemplate> = {},
): PortTemplate => ({
  name,
  type,
  speed,
  mtu: type.startsWith("infiniband") ? null : 9216,
  mgmt: false,
  mac: !type.startsWith("infiniband"),
  uplink: false,
  ...o,
});

export const GPU_PORTS: PortTemplate[] = [
  port("bmc", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }),
  port("eno1", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eth0", "200gbase-x-qsfp56", 200_000_000, { uplink: true }),
  port("eth1", "200gbase-x-qsfp56", 200_000_000, { uplink: true }),
  port("ib0", "infiniband-ndr", 400_000_000),
  port("ib1", "infiniband-ndr", 400_000_000),
  port("ib2", "infiniband-ndr", 400_000_000),
  port("ib3", "infiniband-ndr", 400_000_000),
];
export const CPU_PORTS: PortTemplate[] = [
  port("bmc", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }),
  port("eno1", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eno2", "1000base-t", 1_000_000, { mtu: 1500 }),
  port("eth0", "25gbase-x-sfp28", 25_000_000, { uplink: true }),
  port("eth1", "25gbase-x-sfp28", 25_000_000, { uplink: true }),
  port("eth2", "100gbase-x-qsfp28", 100_000_000),
  port("eth3", "100gbase-x-qsfp28", 100_000_000),
  port("eth4", "25gbase-x-sfp28", 25_000_000),
];

/** The template's first `n` ports, padded with 25G Ethernet ports. */
export function portsFor(template: PortTemplate[], n: number): PortTemplate[] {
  const out = template.slice(0, n);
  for (let k = out.length; k < n; k++) out.push(port(`eth${k}`, "25gbase-x-sfp28", 25_000_000));
  return out;
}

/** The ids of what the catalog created, for the sites to refer to. */
export interface Catalog {
  tags: { fleet: number; burnIn: number; gpu: number };
  types: { gb300: number; h200: number; r760: number; sn5600: number };
  roles: { gpu: number; cpu: number; hyp: number; leaf: number };
  /** manufacturer id -> the first three octets of its MAC addresses. */
  oui: Record<number, number[]>;
}

/** Adds the shared catalog to an empty store; servers get `perDevice` interfaces. */
export function addCatalog(data: NetboxData, stamp: Timestamps, perDevice: number): Catalog {
  data.customFields = { "dcim.device": ["platform_class"], "dcim.devicetype": ["cpu_architecture"] };
  const tag = (name: string, color: string, description: string) => {
    const t: TagRecord = { id: data.tags.length + 1, name, slug: name, color, description, weight: 1000, ...stamp };
    data.tags.push(t);
    return t.id;
  };
  const tags = {
    fleet: tag("fleet-managed", "2196f3", "Managed by the fleet manager"),
    burnIn: tag("burn-in", "ff9800", "In burn-in testing"),
    gpu: tag("gpu", "76b900", ""),
  };
  tag("maintenance", "f44336", "Under maintenance");
  tag("rma", "9e9e9e", "Returned to the vendor");

  const { types, oui } = addDeviceTypes(data, stamp, perDevice);
  const role = (name: string, slug: string, color: string) => {
    data.deviceRoles.push({
      id: data.deviceRoles.length + 1,
      name,
      slug,
      color,
      vm_role: false,
      description: "",
      tags: [],
      custom_fields: {},
      ...stamp,
    });
    return data.deviceRoles.length;
  };
  const roles = {
    gpu: role("GPU node", "gpu-node", "76b900"),
    cpu: role("CPU node", "cpu-node", "2196f3"),
    hyp: role("Hypervisor", "hypervisor", "9c27b0"),
    leaf: role("Leaf switch", "leaf-switch", "607d8b"),
  };
  data.clusterTypes.push({ id: 1, name: "OpenStack", slug: "openstack", description: "", ...stamp });
  data.configContexts.push(...configContexts(stamp, types));
  return { tags, types, roles, oui };
}

/** Manufacturers (with their MAC prefixes) and the device types of GPU trays, servers and leaf switches. */
function addDeviceTypes(data: NetboxData, stamp: Timestamps, perDevice: number): Pick<Catalog, "types" | "oui"> {
  const manufacturer = (name: string, slug: string) => {
    data.manufacturers.push({ id: data.manufacturers.length + 1, name, slug, description: "", ...stamp });
    return data.manufacturers.length;
  };
  const nvidia = manufacturer("NVIDIA", "nvidia");
  const supermicro = manufacturer("Supermicro", "supermicro");
  const dell = manufacturer("Dell", "dell");
  const deviceType = (
    manufacturerId: number,
    [model, slug, part]: [string, string, string],
    u: number,
    arch: string | null,
    ports: number,
  ) => {
    data.deviceTypes.push({
      id: data.deviceTypes.length + 1,
      manufacturer: manufacturerId,
      model,
      slug,
      part_number: part,
      u_height: u,
      is_full_depth: true,
      airflow: "front-to-rear",
      description: "",
      interface_template_count: ports,
      tags: [],
      custom_fields: arch ? { cpu_architecture: arch } : {},
      ...stamp,
    });
    return data.deviceTypes.length;
  };
  const types = {
    gb300: deviceType(nvidia, ["GB300 NVL72 Compute Tray", "gb300-nvl72-compute-tray", ""], 1, "aarch64", perDevice),
    h200: deviceType(
      supermicro,
      ["SYS-821GE-TNHR HGX H200", "sys-821ge-tnhr-hgx-h200", "SYS-821GE-TNHR"],
      8,
      "x86_64",
      perDevice,
    ),
    r760: deviceType(dell, ["PowerEdge R760", "poweredge-r760", ""], 2, "x86_64", perDevice),
    sn5600: deviceType(nvidia, ["SN5600", "sn5600", "920-9N42F-00RI-7C0"], 2, null, 64),
  };
  const oui = { [nvidia]: [0xb8, 0x3f, 0xd2], [supermicro]: [0x3c, 0xec, 0xef], [dell]: [0xb0, 0x7b, 0x25] };
  return { types, oui };
}

const MLX = { LINK_TYPE_P1: "IB", LINK_TYPE_P2: "IB", SRIOV_EN: "1", NUM_OF_VFS: "16", ADVANCED_PCI_SETTINGS: "1" };

/** Config contexts: fleet-wide defaults, then per device type firmware, BIOS and ConnectX settings. */
const CONTEXTS: Array<{
  name: string;
  weight: number;
  description: string;
  deviceType?: keyof Catalog["types"];
  data: Record<string, unknown>;
}> = [
  {
    name: "fleet-defaults",
    weight: 100,
    description: "Defaults for every device",
    data: { ntp_servers: ["10.0.0.1", "10.0.0.2"], firmware_config: { policy: "pinned" } },
  },
  {
    name: "gb300-firmware",
    weight: 1000,
    description: "Firmware, BIOS and ConnectX settings for GB300 NVL72 compute trays",
    deviceType: "gb300",
    data: {
      mlxconfig_config: MLX,
      bios_config: { BootMode: "Uefi", SriovGlobalEnable: "Enabled", NumaNodesPerSocket: "1" },
      firmware_config: { bmc: "25.04-1", cx8: "40.45.1200", gpu_vbios: "97.00.AB.00.01" },
    },
  },
  {
    name: "h200-baseline",
    weight: 1000,
    description: "HGX H200 baseline",
    deviceType: "h200",
    data: {
      mlxconfig_config: { ...MLX, LINK_TYPE_P1: "IB" },
      bios_config: { BootMode: "Uefi", SriovGlobalEnable: "Enabled", IOMMU: "Enabled" },
      firmware_config: { bmc: "01.04.08", bios: "2.6", cx7: "28.43.1014" },
    },
  },
  {
    name: "r760-baseline",
    weight: 1000,
    description: "PowerEdge R760 baseline",
    deviceType: "r760",
    data: {
      mlxconfig_config: { LINK_TYPE_P1: "ETH", SRIOV_EN: "1", NUM_OF_VFS: "32" },
      bios_config: { BootMode: "Uefi", ProcVirtualization: "Enabled", SysProfile: "PerfOptimized" },
      firmware_config: { idrac: "7.10.70.00", bios: "2.3.5" },
    },
  },
];

function configContexts(stamp: Timestamps, types: Catalog["types"]): ConfigContextRecord[] {
  return CONTEXTS.map((c, n) => ({
    id: n + 1,
    name: c.name,
    weight: c.weight,
    description: c.description,
    is_active: true,
    sites: [],
    roles: [],
    device_types: c.deviceType ? [types[c.deviceType]] : [],
    clusters: [],
    data: structuredClone(c.data),
    ...stamp,
  }));
}
