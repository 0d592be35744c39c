/**
 * A node's stored inspection inventory, `GET /v1/nodes/{node}/inventory` (microversion 1.81;
 * Ironic API reference "Node inventory": https://docs.openstack.org/api-ref/baremetal/#node-inventory-nodes;
 * ironic/api/controllers/v1/node.py `NodeInventoryController` and
 * ironic/drivers/modules/inspect_utils.py `get_introspection_data` at 21.4): `{inventory,
 * plugin_data}`, as in-band inspection (ironic-inspector with the agent ramdisk) stored them.
 * Ironic answers 404 (NodeInventoryNotFound) for a node without one: never inspected in band,
 * or inspected out of band through its BMC, which stores none.
 *
 * Only what Fleet Manager reads is declared; the rest passes through. An interface is IPA's
 * `NetworkInterface` (ironic_python_agent/hardware.py): `name`, `mac_address`, and, for an
 * InfiniBand port, `client_id` (hardware_managers/mlnx.py; null for Ethernet).
 */
import { z } from "zod";

export const IronicInventoryInterfaceSchema = z.looseObject({
  name: z.string(),
  mac_address: z.string().nullable().optional(),
  client_id: z.string().nullable().optional(),
});
export type IronicInventoryInterface = z.infer<typeof IronicInventoryInterfaceSchema>;

export const IronicNodeInventorySchema = z.looseObject({
  inventory: z.looseObject({ interfaces: z.array(IronicInventoryInterfaceSchema).default([]) }),
  plugin_data: z.unknown().optional(),
});
export type IronicNodeInventory = z.infer<typeof IronicNodeInventorySchema>;
