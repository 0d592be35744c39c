/** What rendering reads: the store seen from one request, with its URL base and reverse indexes. */
import { NETBOX_VERSION, parseRelease, type NetboxRelease } from "./status.ts";
import type { CableRecord, IpAddressRecord, MacAddressRecord, NetboxData } from "./store.ts";

/** A rendered object. */
export type Json = Record<string, unknown>;

/** Per-request view of the store: absolute URL base, the release answered as, lazily built reverse indexes. */
export class View {
  private memo = new Map<string, unknown>();
  constructor(
    readonly data: NetboxData,
    readonly base: string,
    readonly release: NetboxRelease = parseRelease(NETBOX_VERSION),
  ) {}

  api(path: string): string {
    return `${this.base}/api/${path}`;
  }
  ui(path: string): string {
    return `${this.base}/${path}`;
  }

  private cached<T>(key: string, build: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, build());
    return this.memo.get(key) as T;
  }
  byId<T extends { id: number }>(name: keyof NetboxData, rows: T[]): Map<number, T> {
    return this.cached(`id:${String(name)}`, () => new Map(rows.map((r) => [r.id, r])));
  }
  count<T>(key: string, rows: T[], of: (row: T) => number | null | undefined): Map<number, number> {
    return this.cached(`count:${key}`, () => {
      const m = new Map<number, number>();
      for (const r of rows) {
        const k = of(r);
        if (k != null) m.set(k, (m.get(k) ?? 0) + 1);
      }
      return m;
    });
  }
  /** interface id -> the cable it is on, and which end. */
  cableOf(): Map<number, { cable: CableRecord; end: "A" | "B" }> {
    return this.cached("cableOf", () => {
      const m = new Map<number, { cable: CableRecord; end: "A" | "B" }>();
      for (const [key, link] of this.cableAt())
        if (key.startsWith("dcim.interface:")) m.set(Number(key.split(":")[1]), link);
      return m;
    });
  }
  /** "dcim.frontport:12" (any termination) -> the cable it is on, and which end. */
  cableAt(): Map<string, { cable: CableRecord; end: "A" | "B" }> {
    return this.cached("cableAt", () => {
      const m = new Map<string, { cable: CableRecord; end: "A" | "B" }>();
      for (const c of this.data.cables) {
        for (const i of c.a) m.set(`${c.a_type ?? "dcim.interface"}:${i}`, { cable: c, end: "A" });
        for (const i of c.b) m.set(`${c.b_type ?? "dcim.interface"}:${i}`, { cable: c, end: "B" });
      }
      return m;
    });
  }
  macsOf(): Map<number, MacAddressRecord[]> {
    return this.cached("macsOf", () => group(this.data.macAddresses, (m) => m.interface));
  }
  ipsOf(): Map<number, IpAddressRecord[]> {
    return this.cached("ipsOf", () => group(this.data.ipAddresses, (m) => m.interface));
  }
  /** tag id -> how many objects carry it (Tag.tagged_items). */
  tagged(): Map<number, number> {
    return this.cached("tagged", () => {
      const m = new Map<number, number>();
      const d = this.data;
      for (const rows of [
        d.sites,
        d.locations,
        d.racks,
        d.deviceTypes,
        d.deviceRoles,
        d.clusters,
        d.devices,
        d.interfaces,
        d.cables,
        d.macAddresses,
        d.ipAddresses,
      ]) {
        for (const row of rows as Array<{ tags: number[] }>) for (const t of row.tags) m.set(t, (m.get(t) ?? 0) + 1);
      }
      return m;
    });
  }
  site(id: number) {
    return this.byId("sites", this.data.sites).get(id);
  }
  location(id: number) {
    return this.byId("locations", this.data.locations).get(id);
  }
  rack(id: number) {
    return this.byId("racks", this.data.racks).get(id);
  }
  manufacturer(id: number) {
    return this.byId("manufacturers", this.data.manufacturers).get(id);
  }
  deviceType(id: number) {
    return this.byId("deviceTypes", this.data.deviceTypes).get(id);
  }
  role(id: number) {
    return this.byId("deviceRoles", this.data.deviceRoles).get(id);
  }
  clusterType(id: number) {
    return this.byId("clusterTypes", this.data.clusterTypes).get(id);
  }
  cluster(id: number) {
    return this.byId("clusters", this.data.clusters).get(id);
  }
  tag(id: number) {
    return this.byId("tags", this.data.tags).get(id);
  }
  device(id: number) {
    return this.byId("devices", this.data.devices).get(id);
  }
  iface(id: number) {
    return this.byId("interfaces", this.data.interfaces).get(id);
  }
  mac(id: number) {
    return this.byId("macAddresses", this.data.macAddresses).get(id);
  }
  ip(id: number) {
    return this.byId("ipAddresses", this.data.ipAddresses).get(id);
  }
}

function group<T>(rows: T[], key: (row: T) => number | null): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const r of rows) {
    const k = key(r);
    if (k == null) continue;
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}
