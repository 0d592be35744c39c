/**
 * Demo inventory: sites with their roles, types, racks and devices in varied states, for
 * anyone trying the API or the CLI, and for the benchmarks (which ask for tens of thousands).
 * Deterministic for a given size, and idempotent: a second run changes nothing. What it
 * creates goes to the feed as the API's own writes would put it there (site.created,
 * device_role.created, device.created with the resource's representation).
 */
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { outbox } from "../changes/outbox.ts";
import { storedStatus, toDevice } from "../modules/devices/state.ts";
import type { DeviceBase, Observed } from "../db/device-columns.ts";
import { analyzeInventory, deviceRepo } from "../modules/devices/repo.ts";
import { siteFields } from "../modules/sites/service.ts";

export const DEMO_ROLES = [
  { slug: "gpu-node", name: "GPU node", deviceClass: "GPU_COMPUTE" },
  { slug: "cpu-node", name: "CPU bare-metal node", deviceClass: "CPU_BAREMETAL" },
  { slug: "hypervisor", name: "Hypervisor", deviceClass: "CPU_HYPERVISOR" },
  { slug: "leaf-switch", name: "Leaf switch", deviceClass: "NETWORK" },
] as const;

export const DEMO_TYPES = [
  {
    slug: "nvidia-gb300-nvl72-tray",
    manufacturer: "NVIDIA",
    model: "GB300 NVL72 compute tray",
    cpuArchitecture: "aarch64",
  },
  {
    slug: "supermicro-sys-821ge-hgx-h200",
    manufacturer: "Supermicro",
    model: "SYS-821GE-TNHR (HGX H200)",
    cpuArchitecture: "x86_64",
  },
  { slug: "dell-r760", manufacturer: "Dell", model: "PowerEdge R760", cpuArchitecture: "x86_64" },
  { slug: "nvidia-sn5600", manufacturer: "NVIDIA", model: "Spectrum-4 SN5600", cpuArchitecture: "x86_64" },
] as const;

/** (provision state, SLURM state, health, netbox status) combinations devices cycle through. */
const STATES: {
  ironic: string | null;
  slurm: string | null;
  health: string | null;
  netbox: DeviceBase["netboxStatus"];
  maintenance?: string;
  lastError?: string;
}[] = [
  { ironic: "available", slurm: "IDLE", health: "ok", netbox: "active" },
  { ironic: "active", slurm: "ALLOCATED", health: "ok", netbox: "active" },
  { ironic: "active", slurm: "MIXED", health: "ok", netbox: "active" },
  { ironic: "available", slurm: "IDLE", health: "ok", netbox: "active" },
  { ironic: "manageable", slurm: null, health: null, netbox: "staged" },
  { ironic: "enroll", slurm: null, health: null, netbox: "staged" },
  {
    ironic: "clean failed",
    slurm: "DOWN",
    health: "critical",
    netbox: "active",
    maintenance: "clean failed",
    lastError: "Clean step erase_devices failed: disk /dev/nvme3n1 timed out",
  },
  { ironic: "available", slurm: "DRAIN", health: "warning", netbox: "active" },
  { ironic: null, slurm: null, health: null, netbox: "planned" },
  {
    ironic: "active",
    slurm: "ALLOCATED",
    health: "ok",
    netbox: "active",
    maintenance: "fan tray 3 replacement scheduled",
  },
];

export interface DemoOptions {
  sites?: { slug: string; name: string; region: string | null }[];
  devicesPerSite?: number;
  now?: Date;
  /** The staleness window device events are represented with (the hub's default: 10 min). */
  staleAfterMs?: number;
}

type DemoSite = NonNullable<DemoOptions["sites"]>[number];
type Row = { id: string; slug: string };

/** The demo roles (new ones to the feed) and types; returns their rows. */
async function seedRolesAndTypes(prisma: PrismaClient): Promise<{ roles: Row[]; types: { id: string }[] }> {
  const existingRoles = new Set((await prisma.deviceRole.findMany({ select: { slug: true } })).map((r) => r.slug));
  const roles = await prisma.$transaction(async (tx) => {
    const rows = await Promise.all(
      DEMO_ROLES.map((r) => tx.deviceRole.upsert({ where: { slug: r.slug }, update: {}, create: r })),
    );
    await outbox.appendEvents(
      tx,
      rows
        .filter((r) => !existingRoles.has(r.slug))
        .map((r) => ({
          type: "device_role.created",
          resourceType: "device_role",
          resourceId: r.id,
          siteId: null,
          data: { id: r.id, slug: r.slug, name: r.name, deviceClass: r.deviceClass },
          requestId: null,
        })),
    );
    return rows;
  });
  const types = await Promise.all(
    DEMO_TYPES.map((t) => prisma.deviceType.upsert({ where: { slug: t.slug }, update: {}, create: t })),
  );
  return { roles, types };
}

/** The site (to the feed when new) and its racks. */
async function seedSite(prisma: PrismaClient, s: DemoSite, si: number, perSite: number) {
  const site = await prisma.$transaction(async (tx) => {
    const existing = await tx.site.findUnique({ where: { slug: s.slug } });
    if (existing) return existing;
    const row = await tx.site.create({
      data: {
        ...s,
        netboxSiteId: 100 + si,
        netboxClusterId: 200 + si,
        slurmEnabled: si === 0,
        openstackSlurmEnabled: si === 0,
      },
    });
    await outbox.appendEvents(tx, [
      {
        type: "site.created",
        resourceType: "site",
        resourceId: row.id,
        siteId: row.id,
        data: siteFields(row),
        requestId: null,
      },
    ]);
    return row;
  });
  // One statement: an upsert per rack (1,389 for 25,000 devices) queued on a small pool outwaited
  // its connection timeout on a busy machine.
  const names = Array.from(
    { length: Math.max(1, Math.ceil(perSite / 18)) },
    (_, ri) => `R${String(ri + 1).padStart(3, "0")}`,
  );
  await prisma.rack.createMany({ data: names.map((name) => ({ siteId: site.id, name })), skipDuplicates: true });
  const byName = new Map(
    (await prisma.rack.findMany({ where: { siteId: site.id, name: { in: names } } })).map((r) => [r.name, r]),
  );
  return { site, racks: names.map((n) => byName.get(n)!) };
}

/** Creates the devices that do not exist yet, each to the feed with its representation; returns how many. */
async function seedDevices(
  prisma: PrismaClient,
  siteId: string,
  batch: (Prisma.DeviceCreateManyInput & Partial<Observed>)[],
  now: Date,
  staleAfterMs: number,
): Promise<number> {
  return prisma.$transaction(
    async (tx) => {
      const inserted = await deviceRepo.createMany(tx, batch);
      const rows = await deviceRepo.findByIds(
        tx,
        inserted.map((r) => r.id),
      );
      await outbox.appendEvents(
        tx,
        rows.map((r) => ({
          type: "device.created",
          resourceType: "device",
          resourceId: r.id,
          siteId,
          data: toDevice(r, now, staleAfterMs),
          requestId: null,
        })),
      );
      return inserted.length;
      // A batch of 1,000 devices with their feed events outlasts the default 5 s on a busy machine.
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}

export async function seedDemo(
  prisma: PrismaClient,
  opts: DemoOptions = {},
): Promise<{ sites: number; devices: number }> {
  const sites = opts.sites ?? [
    { slug: "keflavik", name: "Keflavik (ICE2)", region: "eu-north-ice" },
    { slug: "stavanger", name: "Stavanger (STA1)", region: null },
  ];
  const perSite = opts.devicesPerSite ?? 150;
  const now = opts.now ?? new Date();
  const { roles, types } = await seedRolesAndTypes(prisma);
  let created = 0;
  for (const [si, s] of sites.entries()) {
    const { site, racks } = await seedSite(prisma, s, si, perSite);
    for (let start = 0; start < perSite; start += 1000) {
      const batch: (Prisma.DeviceCreateManyInput & Partial<Observed>)[] = [];
      for (let i = start; i < Math.min(perSite, start + 1000); i++)
        batch.push(demoDevice(site.id, s.slug, i, racks, roles, types, now));
      created += await seedDevices(prisma, site.id, batch, now, opts.staleAfterMs ?? 600_000);
    }
  }
  // Fresh statistics for what was bulk-loaded: with stale ones the planner sorted a whole site's
  // rows for a page instead of reading it through the (site_id, id) index.
  if (created > 0) await analyzeInventory(prisma);
  return { sites: sites.length, devices: created };
}

function demoDevice(
  siteId: string,
  siteSlug: string,
  i: number,
  racks: { id: string }[],
  roles: { id: string; slug: string }[],
  types: { id: string }[],
  now: Date,
): Prisma.DeviceCreateManyInput & Partial<Observed> {
  const kind = i % 20 === 0 ? 2 : i % 7 === 0 ? 1 : i % 50 === 1 ? 3 : 0; // mostly GPU trays
  const role = roles[kind]!;
  const st = STATES[i % STATES.length]!;
  const ironic = kind === 3 ? null : st.ironic;
  const data = {
    siteId,
    name: `${siteSlug}-${role.slug}-${String(i + 1).padStart(5, "0")}`,
    serial: `SN${siteSlug.slice(0, 3).toUpperCase()}${String(i + 1).padStart(7, "0")}`,
    rackId: racks[Math.floor(i / 18) % racks.length]!.id,
    rackPosition: (i % 18) * 2 + 1,
    deviceTypeId: types[kind === 0 ? i % 2 : kind === 3 ? 3 : 2]!.id,
    deviceRoleId: role.id,
    netboxId: 10_000 + i,
    netboxStatus: st.netbox,
    netboxObservedAt: now,
    tags: i % 3 === 0 ? ["burn-in-passed"] : [],
    bmcAddress: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    ironicInstance: ironic ? (kind === 2 ? "undercloud" : "overcloud") : null,
    ironicNodeUuid: ironic ? randomUUID() : null,
    ironicProvisionState: ironic,
    ironicPowerState: ironic ? (ironic === "active" ? "power on" : "power off") : null,
    ironicMaintenance: ironic ? Boolean(st.maintenance) : null,
    ironicMaintenanceReason: ironic ? (st.maintenance ?? null) : null,
    ironicLastError: ironic ? (st.lastError ?? null) : null,
    ironicObservedAt: ironic ? now : null,
    slurmNodeName: st.slurm ? `${siteSlug}-gpu${i + 1}` : null,
    slurmState: st.slurm,
    slurmPartitions: st.slurm ? ["gpu"] : [],
    slurmObservedAt: st.slurm ? now : null,
    healthStatus: st.health,
    healthObservedAt: st.health ? now : null,
    cordoned: i % 97 === 5,
    cordonReason: i % 97 === 5 ? "RMA: GPU 4 Xid 79 (fallen off the bus)" : null,
    cordonedBy: i % 97 === 5 ? "demo" : null,
    cordonedAt: i % 97 === 5 ? now : null,
    cordonSource: i % 97 === 5 ? "operator" : null,
  };
  const derived = storedStatus(
    {
      ...data,
      netboxMissing: false,
      slurmStateFlags: [],
      conditions: [],
      healthConditions: null,
    } as unknown as DeviceBase,
    now,
  );
  return {
    ...data,
    operationalStatus: derived.operationalStatus,
    conditions: derived.conditions,
  };
}
