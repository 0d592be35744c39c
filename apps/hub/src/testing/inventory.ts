/** Inventory fixtures for integration tests, written the way the hub writes them. */
import type { PrismaClient } from "../db/client.ts";
import { DEMO_ROLES, seedDemo } from "../seed/demo.ts";
import { storedStatus } from "../modules/devices/state.ts";
import type { DeviceBase } from "../db/device-columns.ts";
import { deviceRepo } from "../modules/devices/repo.ts";

export interface Inventory {
  sites: { keflavik: string; stavanger: string };
  roles: Record<"gpu-node" | "cpu-node" | "hypervisor" | "leaf-switch", string>;
}

/** Two sites (keflavik has a topology region, stavanger not) with `perSite` demo devices each. */
export async function seedInventory(prisma: PrismaClient, perSite = 40, observedAt?: Date): Promise<Inventory> {
  await seedDemo(prisma, { devicesPerSite: perSite, now: observedAt });
  const sites = await prisma.site.findMany({ where: { slug: { in: ["keflavik", "stavanger"] } } });
  const roles = await prisma.deviceRole.findMany();
  return {
    sites: {
      keflavik: sites.find((s) => s.slug === "keflavik")!.id,
      stavanger: sites.find((s) => s.slug === "stavanger")!.id,
    },
    roles: Object.fromEntries(roles.map((r) => [r.slug, r.id])) as Inventory["roles"],
  };
}

/**
 * Devices known to NetBox only (no Ironic, SLURM or health observation yet), as the NetBox
 * reflection leaves them: for tests and benchmarks where another source fills them in.
 * Creates the demo roles and the site when missing; returns the site id.
 */
export async function seedNetboxOnlyDevices(
  prisma: PrismaClient,
  site: { slug: string; name?: string },
  devices: { name: string; role: (typeof DEMO_ROLES)[number]["slug"]; serial?: string }[],
  now = new Date(),
): Promise<string> {
  const roles = new Map<string, string>();
  for (const r of DEMO_ROLES)
    roles.set(r.slug, (await prisma.deviceRole.upsert({ where: { slug: r.slug }, update: {}, create: r })).id);
  const siteRow = await prisma.site.upsert({
    where: { slug: site.slug },
    update: {},
    create: { slug: site.slug, name: site.name ?? site.slug },
  });
  for (let i = 0; i < devices.length; i += 5000) {
    const data = devices.slice(i, i + 5000).map((d) => {
      const row = {
        siteId: siteRow.id,
        name: d.name,
        serial: d.serial ?? null,
        deviceRoleId: roles.get(d.role)!,
        netboxStatus: "active" as const,
        netboxObservedAt: now,
        tags: [],
      };
      const derived = storedStatus(
        {
          ...row,
          netboxMissing: false,
          slurmStateFlags: [],
          conditions: [],
          healthConditions: null,
        } as unknown as DeviceBase,
        now,
      );
      return {
        ...row,
        operationalStatus: derived.operationalStatus,
        conditions: derived.conditions,
      };
    });
    await deviceRepo.createMany(prisma, data);
  }
  return siteRow.id;
}
