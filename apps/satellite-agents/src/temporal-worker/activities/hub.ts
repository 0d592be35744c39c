/**
 * Hub activities: the preflight that plans a job from what the hub knows, and the record of what
 * NetBox and Ironic show of its devices once the job changed them.
 */
import {
  ACTIVE_JOB_STATUSES,
  ironicInstanceFor,
  ironicResourceClassFor,
  type Device,
  type JobCordon,
  type JobDeviceObservation,
} from "@fm/domain";
import type { DevicePlan, JobPlan, WorkflowKind } from "@fm/domain/workflows";
import { nodeRef, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";

type HubDeps = Pick<ActivityDeps, "site" | "hub" | "netbox" | "ironic">;

export function hubActivities(deps: HubDeps) {
  return {
    preflight: (a: { jobId: string; kind: WorkflowKind }) => preflight(deps, a),
    recordOnHub: (jobId: string, devices: DevicePlan[]) => recordOnHub(deps, jobId, devices),
    hubCordon: (jobId: string, cordons: JobCordon[]) => hubCordon(deps, jobId, cordons),
    hubTopologySync: (jobId: string, reason: string) => hubTopologySync(deps, jobId, reason),
  };
}

/** Files the site's topology-sync request for the job; the hub files one per job, so a retry adds none. */
async function hubTopologySync(deps: HubDeps, jobId: string, reason: string): Promise<void> {
  return guarded(async () => {
    await deps.hub.reportJob(jobId, { topologySync: { reason } });
  });
}

/**
 * Cordons (or uncordons) the job's devices in the hub, which the site's SLURM and OpenStack
 * agents mirror as drains and maintenance. Repeating it changes nothing.
 */
async function hubCordon(deps: HubDeps, jobId: string, cordons: JobCordon[]): Promise<void> {
  return guarded(async () => {
    await deps.hub.reportJob(jobId, { cordons });
  });
}

/** The job and its devices as the hub knows them; null when the job is no longer active. */
async function preflight(
  deps: HubDeps,
  { jobId, kind }: { jobId: string; kind: WorkflowKind },
): Promise<JobPlan | null> {
  return guarded(async () => {
    const job = await deps.hub.getJob(jobId);
    if (!ACTIVE_JOB_STATUSES.includes(job.status) || job.status === "CANCELLING") return null;
    if (job.kind !== kind) throw badInput(`job ${job.name} is a ${job.kind} job, not ${kind}`);
    const { site } = await deps.hub.getSite(job.siteId);
    // A workflow on the wrong task queue (a misconfigured queue shared by two sites, or
    // started by hand) must not touch this site's Ironic and NetBox with another site's job.
    if (site.slug !== deps.site)
      throw badInput(`job ${job.name} is at site ${site.slug}; this worker serves ${deps.site}`);
    const devices = await Promise.all(job.deviceIds.map((id) => deps.hub.getDevice(id)));
    return {
      site: {
        slug: site.slug,
        slurmEnabled: site.slurmEnabled,
        openstackSlurmEnabled: site.openstackSlurmEnabled,
        configureDhcp: site.configureDhcp,
        platformClassActivityReady: site.platformClassActivityReady,
        topologyRegion: site.region,
      },
      devices: devices.map(planOf),
    };
  });
}

/** Reads the devices back from NetBox and Ironic and records that on the hub device. */
async function recordOnHub(deps: HubDeps, jobId: string, devices: DevicePlan[]): Promise<void> {
  return guarded(async () => {
    const observations = await Promise.all(devices.map((d) => observe(deps, d)));
    await deps.hub.reportJob(jobId, { devices: observations });
  });
}

/** What NetBox and Ironic show of the device now (each only where this worker reaches it). */
async function observe(deps: HubDeps, d: DevicePlan): Promise<JobDeviceObservation> {
  const observation: JobDeviceObservation = { deviceId: d.deviceId };
  if (d.netboxId !== null && deps.netbox) {
    const nb = await deps.netbox.device(d.netboxId);
    const pc = nb.custom_fields.platform_class;
    observation.netbox = {
      status: nb.status.value as NonNullable<JobDeviceObservation["netbox"]>["status"],
      platformClass: typeof pc === "string" ? pc : null,
      tags: nb.tags.map((t) => t.slug),
    };
  }
  const client = d.ironicInstance ? deps.ironic[d.ironicInstance] : undefined;
  const node = client ? await client.findNode(nodeRef(d)) : null;
  if (node && d.ironicInstance) {
    observation.ironic = {
      instance: d.ironicInstance,
      nodeUuid: node.uuid,
      provisionState: node.provision_state,
      targetProvisionState: node.target_provision_state,
      powerState: node.power_state,
      maintenance: node.maintenance,
      lastError: node.last_error,
    };
  }
  return observation;
}

/** What a workflow needs of a hub device. */
export function planOf(d: Device): DevicePlan {
  const bmc = d.interfaces.find((i) => i.mgmtOnly && i.macAddress) ?? null;
  return {
    deviceId: d.id,
    name: d.name,
    netboxId: d.netbox.id,
    bmcAddress: d.bmcAddress,
    bmcMac: bmc?.macAddress ?? null,
    ironicInstance: d.ironic.instance ?? (d.role ? ironicInstanceFor(d.role.deviceClass) : null),
    ironicNodeUuid: d.ironic.nodeUuid,
    slurmNodeName: d.slurm.nodeName,
    resourceClass: d.role ? ironicResourceClassFor(d.role.deviceClass) : null,
    deviceRoleId: d.role?.id ?? null,
  };
}
