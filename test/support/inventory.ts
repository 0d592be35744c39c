/** Inventory fixtures for integration tests, written the way the hub writes them. */
import type { PrismaClient } from "../../apps/hub/src/db/client.ts";
import { seedDemo } from "../../apps/hub/src/seed/demo.ts";

export interface Inventory {
  sites: { keflavik: string; stavanger: string };
  roles: Record<"gpu-node" | "cpu-node" | "hypervisor" | "leaf-switch", string>;
}

/** Two sites (keflavik has a topology region, stavanger not) with `perSite` demo devices each. */
export async function seedInventory(prisma: PrismaClient, perSite = 40): Promise<Inventory> {
  await seedDemo(prisma, { devicesPerSite: perSite });
  const sites = await prisma.site.findMany({ where: { slug: { in: ["keflavik", "stavanger"] } } });
  const roles = await prisma.deviceRole.findMany();
  return {
    sites: { keflavik: sites.find((s) => s.slug === "keflavik")!.id, stavanger: sites.find((s) => s.slug === "stavanger")!.id },
    roles: Object.fromEntries(roles.map((r) => [r.slug, r.id])) as Inventory["roles"],
  };
}
