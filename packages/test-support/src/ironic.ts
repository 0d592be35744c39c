/**
 * A real OpenStack Ironic for tests (`@fm/test-support/ironic`): the peer (ironic/peer.ts:
 * process, configuration) and raw HTTP helpers for its nodes (ironic/nodes.ts).
 */
export * from "./ironic/peer.ts";
export * from "./ironic/nodes.ts";
export * from "./ironic/inventory.ts";
