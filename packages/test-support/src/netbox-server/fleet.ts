/** A realistic, deterministic fleet for the NetBox test server's store. */
import {
  CPU_PORTS,
  GPU_PORTS,
  SITE_CATALOG,
  addCatalog,
  port,
  portsFor,
  type Catalog,
  type PortTemplate,
} from "./fleet-catalog.ts";
import {
  emptyNetboxData,
  netboxTime,
  type ClusterRecord,
  type DeviceRecord,
  type InterfaceRecord,
  type IpAddressRecord,
  type LocationRecord,
  type MacAddressRecord,
  type NetboxData,
  type RackRecord,
  type SiteRecord,
  type Timestamps,
} from "./store.ts";

/**
 * A fleet as a GPU cloud would have it in NetBox: per site two halls (locations) with racks, GPU
 * trays (GB300 NVL72, aarch64; HGX H200, x86_64), CPU hypervisors and nodes (PowerEdge R760)
 * and leaf switches; servers have 8 interfaces by default (BMC, host management, two Ethernet
 * uplinks cabled to leaf ports, InfiniBand or further Ethernet ports), MAC addresses as
 * dcim.macaddress objects assigned to interfaces and set as their primary_mac_address (NetBox
 * 4.2+), primary and out-of-band IPs, tags, one OpenStack cluster per site that the servers
 * belong to, and config contexts carrying mlxconfig_config, bios_config and firmware_config.
 * `devicesPerSite` counts every device of a site, leaf switches included. Deterministic: the
 * same options give the same store.
 */
export function realisticFleet(opts: {
  sites: number;
  devicesPerSite: number;
  interfacesPerDevice?: number;
}): NetboxData {
  const fleet = new Fleet(opts.interfacesPerDevice ?? 8);
  for (let s = 0; s < opts.sites; s++) fleet.addSite(s, opts.devicesPerSite);
  return fleet.data;
}

const hex2 = (n: number) => (n & 0xff).toString(16).toUpperCase().padStart(2, "0");
const EPOCH = Date.parse("2025-03-01T08:00:00Z");

/** The store being built, with the counters that make ids, MACs and times deterministic. */
class Fleet {
  readonly data = emptyNetboxData();
  readonly t0 = Fleet.at(0);
  readonly stamp: Timestamps = { created: this.t0, last_updated: this.t0 };
  readonly catalog: Catalog;
  private macCounter = 0;
  private deviceSeq = 0;

  constructor(readonly perDevice: number) {
    this.catalog = addCatalog(this.data, this.stamp, perDevice);
  }

  /** A NetBox timestamp `minutes` after the fleet's epoch. */
  static at(minutes: number): string {
    return netboxTime(new Date(EPOCH + minutes * 60_000));
  }

  /** The site, its cluster, halls and racks, then its leaf switches and the servers cabled to them. */
  addSite(s: number, devicesPerSite: number): void {
    const { site, cluster, halls } = this.addSiteRecords(s);
    const leafCount = Math.max(1, Math.ceil(devicesPerSite / 16));
    const servers = Math.max(0, devicesPerSite - leafCount);
    const rackCount = Math.max(halls.length, Math.ceil(servers / 8));
    const racks: RackRecord[] = [];
    for (let r = 0; r < rackCount; r++) {
      const rack: RackRecord = {
        id: this.data.racks.length + 1,
        name: `R${String(r + 1).padStart(2, "0")}`,
        site: site.id,
        location: halls[r % halls.length]!.id,
        status: "active",
        u_height: 48,
        description: "",
        tags: [],
        custom_fields: {},
        ...this.stamp,
      };
      this.data.racks.push(rack);
      racks.push(rack);
    }
    // Leaf switches first, so servers can be cabled to their ports.
    const leafPorts: InterfaceRecord[][] = [];
    for (let l = 0; l < leafCount; l++) leafPorts.push(this.addLeaf(s, site, racks[l % racks.length]!, l));
    const cursor = new Map<number, number>(racks.map((r) => [r.id, 2]));
    const uplinks = { next: 0, leafPorts };
    for (let k = 0; k < servers; k++) this.addServer(s, site, cluster, racks, cursor, k, uplinks);
  }

  private addSiteRecords(s: number): { site: SiteRecord; cluster: ClusterRecord; halls: LocationRecord[] } {
    const cat = SITE_CATALOG[s % SITE_CATALOG.length]!;
    const round = Math.floor(s / SITE_CATALOG.length);
    const name = round ? `${cat.name}-${round + 1}` : cat.name;
    const slug = name.toLowerCase();
    const site: SiteRecord = {
      id: s + 1,
      name,
      slug,
      status: "active",
      facility: cat.facility,
      time_zone: cat.tz,
      description: "",
      physical_address: cat.address,
      latitude: cat.lat,
      longitude: cat.lon,
      tags: [],
      custom_fields: {},
      ...this.stamp,
    };
    this.data.sites.push(site);
    const cluster: ClusterRecord = {
      id: s + 1,
      name: `${slug}-compute`,
      type: 1,
      status: "active",
      site: site.id,
      description: "",
      tags: [],
      custom_fields: {},
      ...this.stamp,
    };
    this.data.clusters.push(cluster);
    const halls = ["A", "B"].map((h) => {
      const l: LocationRecord = {
        id: this.data.locations.length + 1,
        name: `Hall ${h}`,
        slug: `${slug}-hall-${h.toLowerCase()}`,
        site: site.id,
        status: "active",
        description: "",
        tags: [],
        custom_fields: {},
        ...this.stamp,
      };
      this.data.locations.push(l);
      return l;
    });
    return { site, cluster, halls };
  }

  /** A leaf switch at the top of `rack` with 64 OSFP ports and a management port; returns the ports. */
  private addLeaf(s: number, site: SiteRecord, rack: RackRecord, l: number): InterfaceRecord[] {
    const { types, roles, tags } = this.catalog;
    this.deviceSeq++;
    const leaf: DeviceRecord = {
      id: this.data.devices.length + 1,
      name: `leaf-${site.slug}-${String(l + 1).padStart(2, "0")}`,
      device_type: types.sn5600,
      role: roles.leaf,
      serial: `MT${2400 + s}X${String(10000 + this.deviceSeq).slice(-5)}`,
      asset_tag: null,
      site: site.id,
      location: rack.location,
      rack: rack.id,
      position: 46,
      face: "front",
      status: "active",
      airflow: "front-to-rear",
      primary_ip4: null,
      oob_ip: null,
      cluster: null,
      description: "",
      comments: "",
      local_context_data: null,
      tags: [tags.fleet],
      custom_fields: { platform_class: null },
      created: this.t0,
      last_updated: Fleet.at(this.deviceSeq),
    };
    this.data.devices.push(leaf);
    const nvidia = this.data.deviceTypes[types.sn5600 - 1]!.manufacturer;
    const ports: InterfaceRecord[] = [];
    for (let p = 1; p <= 64; p++)
      ports.push(this.addInterface(leaf.id, port(`swp${p}`, "400gbase-x-osfp", 400_000_000), nvidia));
    const mgmt = this.addInterface(leaf.id, port("eth0", "1000base-t", 1_000_000, { mgmt: true, mtu: 1500 }), nvidia);
    leaf.oob_ip = this.addIp(`10.${100 + s + 1}.0.${l + 2}/24`, mgmt.id, `${leaf.name}.oob.${site.slug}.example.net`);
    return ports;
  }

  /**
   * The k-th server of a site: half GB300 trays, a quarter HGX H200, the rest R760 hypervisors
   * and CPU nodes, eight to a rack, with their interfaces, IPs and uplink cables.
   */
  private addServer(
    s: number,
    site: SiteRecord,
    cluster: ClusterRecord,
    racks: RackRecord[],
    cursor: Map<number, number>,
    k: number,
    uplinks: { next: number; leafPorts: InterfaceRecord[][] },
  ): void {
    this.deviceSeq++;
    const kind = k % 8 < 4 ? "gb300" : k % 8 < 6 ? "h200" : k % 8 === 6 ? "hyp" : "cpu";
    const gpu = kind === "gb300" || kind === "h200";
    const typeId = kind === "hyp" || kind === "cpu" ? this.catalog.types.r760 : this.catalog.types[kind];
    const type = this.data.deviceTypes[typeId - 1]!;
    const rack = racks[Math.floor(k / 8) % racks.length]!;
    const pos = cursor.get(rack.id)!;
    const fits = pos + type.u_height <= 46;
    cursor.set(rack.id, fits ? pos + type.u_height : pos);
    const dev = this.serverRecord(s, site, cluster, rack, k, kind, typeId);
    dev.position = fits ? pos : null;
    dev.face = fits ? "front" : null;
    this.data.devices.push(dev);
    const ports = portsFor(gpu ? GPU_PORTS : CPU_PORTS, this.perDevice);
    const ifaces = ports.map((p) => this.addInterface(dev.id, p, type.manufacturer));
    const third = Math.floor(k / 250) + 1;
    const fourth = (k % 250) + 10;
    const bmc = ifaces.find((i) => i.mgmt_only);
    if (bmc)
      dev.oob_ip = this.addIp(
        `10.${100 + s + 1}.${third}.${fourth}/24`,
        bmc.id,
        `${dev.name}.oob.${site.slug}.example.net`,
      );
    const primary = ifaces.find((_i, n) => ports[n]!.uplink) ?? ifaces.find((i) => !i.mgmt_only);
    if (primary)
      dev.primary_ip4 = this.addIp(
        `10.${s + 1}.${third}.${fourth}/24`,
        primary.id,
        `${dev.name}.${site.slug}.example.net`,
      );
    ifaces.forEach((i, n) => {
      if (ports[n]!.uplink) this.cableUplink(dev, i, uplinks);
    });
  }

  private serverRecord(
    s: number,
    site: SiteRecord,
    cluster: ClusterRecord,
    rack: RackRecord,
    k: number,
    kind: "gb300" | "h200" | "hyp" | "cpu",
    typeId: number,
  ): DeviceRecord {
    const { roles, tags } = this.catalog;
    const seq = this.deviceSeq;
    const prefix = kind === "gb300" || kind === "h200" ? "gpu" : kind === "hyp" ? "hv" : "cpu";
    const status =
      k % 20 === 7
        ? "planned"
        : k % 20 === 13
          ? "staged"
          : k % 29 === 5
            ? "failed"
            : k % 31 === 17
              ? "offline"
              : "active";
    return {
      id: this.data.devices.length + 1,
      name: `${prefix}-${site.slug}-${rack.name.toLowerCase()}-${String((k % 8) + 1).padStart(2, "0")}`,
      device_type: typeId,
      role: kind === "hyp" ? roles.hyp : kind === "cpu" ? roles.cpu : roles.gpu,
      serial:
        kind === "gb300"
          ? `1794124${String(100000 + seq).slice(-6)}`
          : kind === "h200"
            ? `S4${String(3100000 + seq * 37)}`
            : (0x1f2e3d + seq * 7919).toString(36).toUpperCase().slice(-7),
      asset_tag: `AT-${site.slug.toUpperCase()}-${String(seq).padStart(5, "0")}`,
      site: site.id,
      location: rack.location,
      rack: rack.id,
      position: null,
      face: null,
      status,
      airflow: "front-to-rear",
      primary_ip4: null,
      oob_ip: null,
      cluster: cluster.id,
      description: "",
      comments: "",
      local_context_data: k % 10 === 3 ? { bios_config: { SriovGlobalEnable: "Disabled" } } : null,
      tags: [tags.fleet, ...(prefix === "gpu" ? [tags.gpu] : []), ...(k % 9 === 4 ? [tags.burnIn] : [])],
      custom_fields: { platform_class: null },
      created: this.t0,
      last_updated: Fleet.at(seq * 7),
    };
  }

  /** Cables a server uplink to the next free leaf port, spreading uplinks over the leaves. */
  private cableUplink(
    dev: DeviceRecord,
    i: InterfaceRecord,
    uplinks: { next: number; leafPorts: InterfaceRecord[][] },
  ): void {
    const leafCount = uplinks.leafPorts.length;
    const leafPort = uplinks.leafPorts[uplinks.next % leafCount]![Math.floor(uplinks.next / leafCount)];
    uplinks.next++;
    if (!leafPort) return; // more uplinks than leaf ports: leave the rest uncabled
    this.data.cables.push({
      id: this.data.cables.length + 1,
      type: "mmf-om4",
      a: [i.id],
      b: [leafPort.id],
      status: dev.status === "planned" ? "planned" : "connected",
      label: "",
      color: "",
      length: 3 + (uplinks.next % 5),
      length_unit: "m",
      description: "",
      tags: [],
      custom_fields: {},
      ...this.stamp,
    });
  }

  /** An interface with, for Ethernet ports, a MAC address from the manufacturer's prefix as its primary MAC. */
  private addInterface(deviceId: number, p: PortTemplate, manufacturerId: number): InterfaceRecord {
    const time = this.t0;
    const i: InterfaceRecord = {
      id: this.data.interfaces.length + 1,
      device: deviceId,
      name: p.name,
      label: "",
      type: p.type,
      enabled: true,
      mtu: p.mtu,
      speed: p.speed,
      mgmt_only: p.mgmt,
      description: "",
      primary_mac_address: null,
      mark_connected: false,
      tags: [],
      custom_fields: {},
      created: time,
      last_updated: time,
    };
    this.data.interfaces.push(i);
    if (p.mac) {
      const m: MacAddressRecord = {
        id: this.data.macAddresses.length + 1,
        mac_address: this.nextMac(manufacturerId),
        interface: i.id,
        description: "",
        comments: "",
        tags: [],
        custom_fields: {},
        created: time,
        last_updated: time,
      };
      this.data.macAddresses.push(m);
      i.primary_mac_address = m.id;
    }
    return i;
  }

  private nextMac(manufacturerId: number): string {
    const c = ++this.macCounter;
    const o = this.catalog.oui[manufacturerId]!;
    return [...o, (c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff].map(hex2).join(":");
  }

  private addIp(address: string, interfaceId: number, dns: string): number {
    const ip: IpAddressRecord = {
      id: this.data.ipAddresses.length + 1,
      address,
      status: "active",
      interface: interfaceId,
      dns_name: dns,
      description: "",
      comments: "",
      tags: [],
      custom_fields: {},
      created: this.t0,
      last_updated: this.t0,
    };
    this.data.ipAddresses.push(ip);
    return ip.id;
  }
}
