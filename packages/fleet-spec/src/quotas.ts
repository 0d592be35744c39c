/**
 * What a plan needs from the tenant's quota allowances in its region (the seed's list, step 5):
 * per cluster, its workers' instances, non-GPU vCPUs, GPUs by family, boot disks (count and
 * bytes), a GPU cluster when enabled, a filesystem when enabled, and two `vpc.allocation.count`
 * per worker (its private address and its pod alias range; the control plane is service-owned);
 * per created project its VPC objects; per bucket a count and its capacity cap in bytes.
 *
 * GPU workers bound to a *validated* capacity block group draw on the reservation, not the
 * on-demand GPU quota (docs.nebius.com/overview/limits/capacity-block-groups); every other quota
 * of those workers still applies. GPU workers' vCPUs are not non-GPU vCPUs.
 */
import type { FleetPlan } from "./output.ts";

export const GIB = 1024 ** 3;

/** Quota name suffix of a bucket's storage class: Enhanced is Nebius Enhanced Throughput. */
export const BUCKET_SIZE_CLASS = { standard: "standard", enhanced: "enhanced-throughput" } as const;

/** A created project's network: one network, one subnet, two pools, one route table, one route. */
export const NEW_PROJECT_VPC: readonly (readonly [string, number])[] = [
  ["vpc.network.count", 1],
  ["vpc.subnet.count", 1],
  ["vpc.pool.count", 2],
  ["vpc.routetable.count", 1],
  ["vpc.route.count", 1],
];

export interface Demand {
  name: string;
  unit: string;
  required: number;
  from: { subject: string; amount: number }[];
}

export interface DemandContext {
  /** Project keys that will be created (their VPC objects are new). */
  newProjects: ReadonlySet<string>;
  /** Capacity block groups that passed every check. */
  validatedBlocks: ReadonlySet<string>;
}

export function quotaDemand(plan: FleetPlan, ctx: DemandContext): Demand[] {
  const byName = new Map<string, Demand>();
  const add = (name: string, unit: string, amount: number, subject: string) => {
    if (amount <= 0) return;
    const d = byName.get(name) ?? { name, unit, required: 0, from: [] };
    d.required += amount;
    d.from.push({ subject, amount });
    byName.set(name, d);
  };
  for (const p of plan.projects) {
    if (ctx.newProjects.has(p.key)) for (const [name, n] of NEW_PROJECT_VPC) add(name, "count", n, `project ${p.key}`);
    if (p.objectStorage) {
      add("storage.bucket.count", "count", 1, `bucket of ${p.key}`);
      const cls = BUCKET_SIZE_CLASS[p.objectStorage.storageClass];
      add(`storage.bucket.size.${cls}`, "byte", p.objectStorage.sizeGibibytes * GIB, `bucket of ${p.key}`);
    }
    for (const c of p.clusters) {
      const subject = `${p.key}/${c.name}`;
      const pools = [c.cpuNodes, c.gpuNodes].filter((x) => x !== null);
      const workers = pools.reduce((n, x) => n + x.count, 0);
      add("compute.instance.count", "count", workers, subject);
      add("compute.disk.count", "count", workers, subject);
      add(
        "compute.disk.size.network-ssd",
        "byte",
        pools.reduce((n, x) => n + x.count * x.bootDiskGibibytes * GIB, 0),
        subject,
      );
      add("vpc.allocation.count", "count", 2 * workers, subject);
      if (c.cpuNodes) add("compute.instance.non-gpu.vcpu", "vCPU", c.cpuNodes.count * c.cpuNodes.vcpusPerNode, subject);
      const g = c.gpuNodes;
      if (g && !(g.capacityBlockGroup && ctx.validatedBlocks.has(g.capacityBlockGroup)))
        add(`compute.instance.gpu.${g.gpuFamily}`, "GPU", g.count * g.gpusPerNode, subject);
      if (c.enableGpuCluster) add("compute.gpucluster.count", "count", 1, subject);
      if (c.filestore) {
        add("compute.filesystem.count", "count", 1, subject);
        add("compute.filesystem.size.network-ssd", "byte", c.filestore.sizeGibibytes * GIB, subject);
      }
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
