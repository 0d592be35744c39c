/**
 * IMAGE_NODE's deploy: an image onto an available node with Ironic's deploy (direct deploy on
 * real hardware: the agent ramdisk writes the image the conductor serves), its user data in a
 * config drive, until the node is `active`. Fields as the Ironic API reference and the 2023.1
 * install guide name them (https://docs.openstack.org/ironic/2023.1/install/standalone/deploy.html):
 * `instance_info.image_source` (a Glance id or an http(s) URL), `image_os_hash_algo` /
 * `image_os_hash_value` for a URL, and `configdrive` as a JSON object in the provision request
 * (microversion 1.56+), which Ironic builds the config drive from and stores masked.
 */
import { parseImageSource } from "@fm/domain";
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, nodeRef, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";
import { ironicTransitions, inOrPast } from "./ironic-transitions.ts";

type DeployDeps = Pick<ActivityDeps, "ironic" | "pollIntervalMs">;

export interface DeployRequest {
  image: string;
  osHash?: { algo: string; value: string } | undefined;
  userData?: string | undefined;
  /** The asking workflow's id: a retry of the same job finds its own deploy. */
  marker: string;
}

export function deployActivities(deps: DeployDeps) {
  return { ironicDeploy: (d: DevicePlan, o: DeployRequest) => ironicDeploy(deps, d, o) };
}

/** instance_info fields a previous deploy may have left that this one must not inherit. */
const CHECKSUM_FIELDS = ["image_os_hash_algo", "image_os_hash_value", "image_checksum"];

/**
 * Deploys once per job: the node's extra.fleet_manager_deploy records which workflow asked and
 * Ironic's provision_updated_at before it did, so a retry after a lost answer waits for that
 * deploy instead of asking again, and a node another job deployed is refused as not available.
 */
async function ironicDeploy(deps: DeployDeps, d: DevicePlan, o: DeployRequest): Promise<void> {
  const { waitFor, request } = ironicTransitions(deps);
  return guarded(async () => {
    // Behind the hub's own check (a job queued before it, or a hub that skipped it): Ironic
    // never gets a file:// or other URL as the image to copy onto a node.
    const source = parseImageSource(o.image);
    if (!source.ok) throw badInput(`${d.name}: image ${source.message}`);
    if (source.source.kind === "url" && !o.osHash) throw badInput(`${d.name}: an image URL needs its digest`);
    const client = ironicFor(deps, d);
    const node = await client.getNode(nodeRef(d));
    const mark = node.extra.fleet_manager_deploy as { by?: string; before?: string | null } | undefined;
    const ours = mark?.by === o.marker;
    const moved = ours && node.provision_updated_at !== (mark.before ?? null);
    if (!ours) {
      if (node.provision_state !== "available" || node.target_provision_state)
        throw badInput(`${d.name} is not available to deploy an image on (Ironic ${node.provision_state})`);
      const info = node.instance_info ?? {};
      await client.patchNode(node.uuid, [
        ...CHECKSUM_FIELDS.filter((f) => f in info).map((f) => ({
          op: "remove" as const,
          path: `/instance_info/${f}`,
        })),
        { op: "add", path: "/instance_info/image_source", value: o.image },
        ...(o.osHash
          ? [
              { op: "add" as const, path: "/instance_info/image_os_hash_algo", value: o.osHash.algo },
              { op: "add" as const, path: "/instance_info/image_os_hash_value", value: o.osHash.value.toLowerCase() },
            ]
          : []),
        { op: "add", path: "/extra/fleet_manager_deploy", value: { by: o.marker, before: node.provision_updated_at } },
      ]);
    }
    const body = o.userData !== undefined ? { configdrive: { user_data: o.userData } } : {};
    const settled = inOrPast("deploying", "wait call-back", "active", "deploy failed");
    if (!moved && node.provision_state === "available" && !node.target_provision_state)
      await request(client, node.uuid, "active", settled, body);
    await waitFor(client, node.uuid, ["active"], ["available", "deploying", "wait call-back"], "deploy", {
      from: "available",
      target: "active",
      settled,
      body,
    });
  });
}
