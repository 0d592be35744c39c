/**
 * SLURM adoption's Nova activity: the server on the device's Ironic node, made from the site's
 * SlurmBootstrapConfig for the device's role (image, flavor, GRES, user data), with the SLURM
 * project's key pair and provider network, and waited for until ACTIVE.
 *
 * The bootstrap config is read here, from the hub, and never passes through the workflow: user
 * data may carry what a node needs to join the cluster, which has no place in a Temporal history.
 *
 * Looking before acting: the server is named after the SLURM node and carries the device's id in
 * its metadata, so an attempt after a worker died finds the server the first one made. A server
 * that ends in ERROR is deleted (Nova gives the node back to Ironic's `available`) and the step
 * fails with Nova's fault message, so another SLURM_ADOPT can run once the cause is fixed.
 */
import { Context } from "@temporalio/activity";
import { slurmNodeNameOf } from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import type { NovaClient, NovaServer } from "@fm/clients";
import { ironicFor, nodeRef, novaOf, type ActivityDeps } from "./deps.ts";
import { badInput, guarded, sourceRejected } from "./failures.ts";

type NovaDeps = Pick<
  ActivityDeps,
  "site" | "hub" | "ironic" | "nova" | "slurmAdoption" | "slurmDeviceNamePrefix" | "pollIntervalMs"
>;

/** The metadata key naming the device a server was made for. */
export const DEVICE_METADATA = "fleet_manager_device";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function novaActivities(deps: NovaDeps) {
  return {
    novaBootSlurmNode: (d: DevicePlan, a: { jobId: string }) => novaBootSlurmNode(deps, d, a),
  };
}

/** The SLURM node a device becomes, which is also its server's name (the VM's hostname). */
export function adoptedNodeName(deps: Pick<ActivityDeps, "slurmDeviceNamePrefix">, d: DevicePlan): string {
  const node = slurmNodeNameOf(d.name, d.slurmNodeName, deps.slurmDeviceNamePrefix);
  if (node === null)
    throw badInput(`${d.name} is no SLURM node: its name does not start with ${deps.slurmDeviceNamePrefix}`);
  return node;
}

async function novaBootSlurmNode(
  deps: NovaDeps,
  d: DevicePlan,
  a: { jobId: string },
): Promise<{ serverId: string; nodeUuid: string; server: string }> {
  return guarded(async () => {
    const { nova, adoption } = novaOf(deps);
    const name = adoptedNodeName(deps, d);
    const node = await ironicFor(deps, d).findNode(nodeRef(d));
    if (!node) throw badInput(`Ironic has no node ${nodeRef(d)} for ${d.name}`);

    let server = await ours(nova, name, d);
    if (!server) {
      const config = await bootstrapConfigOf(deps, d);
      if (!UUID.test(config.image))
        throw badInput(
          `the SLURM bootstrap config of ${d.name}'s role names image ${JSON.stringify(config.image)}: Nova takes a Glance image UUID (imageRef)`,
        );
      const flavorRef = await nova.flavorId(config.flavor);
      if (!flavorRef)
        throw badInput(
          `Nova has no flavor ${JSON.stringify(config.flavor)} (SLURM bootstrap config of ${d.name}'s role)`,
        );
      await nova.createServer({
        name,
        imageRef: config.image,
        flavorRef,
        keyName: adoption.keyName,
        networkId: adoption.networkId,
        userData: config.userData ?? undefined,
        hypervisorHostname: node.uuid,
        // The VM's cloud-init reads these from the metadata service or config drive.
        metadata: {
          [DEVICE_METADATA]: d.deviceId,
          fleet_manager_job: a.jobId,
          ...(config.gres ? { slurm_gres: config.gres } : {}),
        },
      });
      // Look-then-create is two steps: should two attempts have raced, the oldest server wins.
      const made = await mine(nova, name, d);
      for (const extra of made.slice(1)) await nova.deleteServer(extra.id);
      server = made[0] ?? null;
      if (!server) throw new Error(`Nova accepted server ${name} but does not list it yet`);
    }
    const active = await untilActive(deps, nova, server.id, name);
    return { serverId: active.id, nodeUuid: node.uuid, server: name };
  });
}

/** This device's servers of that name, oldest first; another device's server of the name is refused. */
async function mine(nova: NovaClient, name: string, d: DevicePlan): Promise<NovaServer[]> {
  const named = await nova.serversNamed(name);
  const strangers = named.filter((s) => s.metadata?.[DEVICE_METADATA] !== d.deviceId);
  if (strangers.length)
    throw badInput(
      `Nova already has a server named ${name} (${strangers.map((s) => s.id).join(", ")}) that Fleet Manager did not make for ${d.name}`,
    );
  return named.sort((x, y) => String(x.created ?? "").localeCompare(String(y.created ?? "")));
}

/** The server an earlier attempt made, if any; one left in ERROR by an earlier failure is deleted first. */
async function ours(nova: NovaClient, name: string, d: DevicePlan): Promise<NovaServer | null> {
  const found = await mine(nova, name, d);
  const live = found.find((s) => s.status !== "ERROR");
  if (live) return live;
  for (const s of found) await deleted(nova, s.id);
  return null;
}

/** Deletes a server and waits until Nova no longer lists it: only then is its node `available` again. */
async function deleted(nova: NovaClient, id: string): Promise<void> {
  const ctx = Context.current();
  await nova.deleteServer(id);
  while (await nova.server(id)) {
    ctx.heartbeat({ deleting: id });
    await ctx.sleep(1000);
  }
}

async function bootstrapConfigOf(deps: NovaDeps, d: DevicePlan) {
  if (!d.deviceRoleId) throw badInput(`${d.name} has no device role, so no SLURM bootstrap config applies`);
  const site = await deps.hub.findSite(deps.site);
  if (!site) throw badInput(`the hub has no site ${deps.site}`);
  const config = (await deps.hub.slurmBootstrapConfigs(site.id)).find((c) => c.deviceRoleId === d.deviceRoleId);
  if (!config)
    throw badInput(
      `${deps.site} has no SLURM bootstrap config for ${d.name}'s device role ${d.deviceRoleId}: create one (POST /api/v1/sites/${site.id}/slurm-bootstrap-configs/)`,
    );
  return config;
}

/** Polls the server until ACTIVE; ERROR deletes it and fails with Nova's fault. */
async function untilActive(deps: NovaDeps, nova: NovaClient, id: string, name: string): Promise<NovaServer> {
  const ctx = Context.current();
  for (;;) {
    const s = await nova.server(id);
    if (!s) throw sourceRejected(`Nova server ${name} (${id}) was deleted while it was being built`);
    ctx.heartbeat({ status: s.status, task: s["OS-EXT-STS:task_state"] ?? null });
    if (s.status === "ACTIVE") return s;
    if (s.status === "ERROR") {
      await deleted(nova, id);
      throw sourceRejected(`Nova server ${name} failed: ${s.fault?.message ?? "status ERROR without a fault"}`);
    }
    await ctx.sleep(deps.pollIntervalMs);
  }
}
