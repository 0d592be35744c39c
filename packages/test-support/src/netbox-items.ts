import type { NetboxItem } from "@fm/domain";

/**
 * A NetBox push's device with nothing but what a push requires: a GPU node (role `gpu-node`,
 * NetBox role id 1), active, no type, place, tags or interfaces. `over` sets the rest.
 */
export function bareNetboxItem(name: string, netboxId: number, over: Partial<NetboxItem> = {}): NetboxItem {
  return {
    netboxId,
    name,
    serial: null,
    assetTag: null,
    status: "active",
    role: { slug: "gpu-node", name: "GPU node", netboxId: 1, deviceClass: "GPU_COMPUTE" },
    deviceType: null,
    location: null,
    rack: null,
    rackPosition: null,
    platformClass: null,
    tags: [],
    bmcAddress: null,
    interfaces: [],
    ...over,
  };
}
