/**
 * What the Nova test server does to a real Ironic node, as Nova's scheduler and its Ironic virt
 * driver do (nova/virt/ironic/driver.py at the 2023.1 release, `spawn`, `_add_instance_info_to_node`,
 * `_wait_for_active`, `destroy`, `_unprovision`, `_cleanup_deploy`; nova/exception.py for the
 * messages):
 *
 * - scheduling: a node in maintenance, not `available`, or already holding an instance is not a
 *   valid host; with `hypervisor_hostname` naming it, the build ends in ERROR with NoValidHost
 *   ("No valid host was found. There are not enough hosts available.", fault code 500);
 * - spawn: PATCH the node's `instance_uuid` and `instance_info` (image_source, root_gb, swap_mb,
 *   display_name, vcpus, memory_mb, local_gb), then `PUT /states/provision {"target": "active",
 *   "configdrive": {...}}` with the user data in the config drive, and poll until `active`; a node
 *   in `deploy failed` fails the build with InstanceDeployFailure, "Failed to provision instance
 *   <uuid>: <last_error>";
 * - destroy: `PUT /states/provision {"target": "deleted"}`, wait until the node is `available`
 *   again (through cleaning), then remove `instance_uuid` and `instance_info`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ironicRequest, type RawIronicNode } from "../ironic/nodes.ts";

export const NO_VALID_HOST = "No valid host was found. There are not enough hosts available.";

export interface Flavor {
  id: string;
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
  extraSpecs: Record<string, string>;
}

export class BuildFailure extends Error {}

const nodePath = (uuid: string) => `/v1/nodes/${encodeURIComponent(uuid)}`;

async function node(ironicUrl: string, uuid: string): Promise<RawIronicNode | null> {
  try {
    return (await ironicRequest(ironicUrl, "GET", nodePath(uuid))) as RawIronicNode;
  } catch (err) {
    if (/-> 404/.test((err as Error).message)) return null;
    throw err;
  }
}

async function waitFor(
  ironicUrl: string,
  uuid: string,
  done: (n: RawIronicNode) => boolean,
  failed: (n: RawIronicNode) => boolean,
  pollMs: number,
  timeoutMs = 120_000,
): Promise<RawIronicNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = (await node(ironicUrl, uuid))!;
    if (done(n)) return n;
    if (failed(n)) throw new BuildFailure(n.last_error ?? n.provision_state);
    if (Date.now() > deadline) throw new BuildFailure(`Timeout waiting for node ${uuid} (${n.provision_state})`);
    await sleep(pollMs);
  }
}

/** The scheduler's verdict on one node for this server: null when it is a valid host. */
export async function scheduleOn(ironicUrl: string, uuid: string): Promise<string | null> {
  const n = await node(ironicUrl, uuid);
  if (!n || n.maintenance || n.provision_state !== "available" || n.instance_uuid) return NO_VALID_HOST;
  return null;
}

/** Nova's Ironic driver `spawn`: instance_info, deploy with a config drive, wait for `active`. */
export async function spawn(
  ironicUrl: string,
  o: { nodeUuid: string; serverId: string; name: string; imageId: string; flavor: Flavor; userData?: string },
  pollMs: number,
): Promise<void> {
  await ironicRequest(ironicUrl, "PATCH", nodePath(o.nodeUuid), [
    { op: "add", path: "/instance_uuid", value: o.serverId },
    {
      op: "add",
      path: "/instance_info",
      value: {
        image_source: o.imageId,
        root_gb: String(o.flavor.disk),
        swap_mb: "0",
        display_name: o.name,
        vcpus: String(o.flavor.vcpus),
        memory_mb: String(o.flavor.ram),
        local_gb: String(o.flavor.disk),
      },
    },
  ]);
  // Ironic takes the config drive as a JSON object from API 1.56 and builds the ISO itself.
  const configdrive = {
    meta_data: { uuid: o.serverId, name: o.name, hostname: o.name },
    ...(o.userData ? { user_data: Buffer.from(o.userData, "base64").toString("utf8") } : {}),
  };
  await ironicRequest(ironicUrl, "PUT", `${nodePath(o.nodeUuid)}/states/provision`, { target: "active", configdrive });
  try {
    await waitFor(
      ironicUrl,
      o.nodeUuid,
      (n) => n.provision_state === "active",
      (n) => n.provision_state === "deploy failed" || n.provision_state === "error",
      pollMs,
    );
  } catch (err) {
    if (err instanceof BuildFailure)
      throw new BuildFailure(`Failed to provision instance ${o.serverId}: ${err.message}`);
    throw err;
  }
}

/** Nova's Ironic driver `destroy`: undeploy (cleaning), then forget the instance on the node. */
export async function destroy(ironicUrl: string, nodeUuid: string, serverId: string, pollMs: number): Promise<void> {
  const n = await node(ironicUrl, nodeUuid);
  if (!n || n.instance_uuid !== serverId) return;
  if (["active", "deploy failed", "error", "wait call-back", "deploying"].includes(n.provision_state))
    await ironicRequest(ironicUrl, "PUT", `${nodePath(nodeUuid)}/states/provision`, { target: "deleted" });
  const after = await waitFor(
    ironicUrl,
    nodeUuid,
    (x) => x.provision_state === "available" || x.provision_state === "clean failed",
    () => false,
    pollMs,
  );
  // Ironic's tear-down may already have cleared them; removing what is gone is a 400.
  const patch = [
    ...(after.instance_uuid ? [{ op: "remove", path: "/instance_uuid" }] : []),
    ...(Object.keys((after.instance_info as object | undefined) ?? {}).length
      ? [{ op: "remove", path: "/instance_info" }]
      : []),
  ];
  if (patch.length) await ironicRequest(ironicUrl, "PATCH", nodePath(nodeUuid), patch);
}
